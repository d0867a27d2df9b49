/**
 * `edgelock dev`: a dev cluster in the foreground (see `startDevCluster`).
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { startDevCluster } from "../cluster";
import { DevClusterError } from "../errors";
import type { DevCluster, DevClusterOptions } from "../types";
import { parse, UsageError } from "./args";

/** Most nodes `edgelock dev` starts (as `startDevCluster`). */
const MAX_NODES = 64;

export const DEV_USAGE = `Usage: edgelock dev [options]

Starts N nodes on loopback, each behind an Upstash-compatible REST endpoint, and prints their
{url, token} configuration. Ctrl-C (SIGINT) or SIGTERM stops everything. The nodes are
redis-server processes when redis-server is on PATH and ioredis is installed, else in-memory
nodes in this process (nothing to install; no durability, a restart comes back empty, no memory
limit or eviction, only the commands edgelock uses). The output says which.

Options:
  --memory             in-memory nodes, even with redis-server installed
  --redis              redis-server processes (fails when redis-server or ioredis is missing)
  --nodes <n>          number of nodes, 1 to ${MAX_NODES} (default 3; an odd number)
  --port <p>           REST port of node 0; node i gets p+i (default: free ephemeral ports)
  --host <h>           interface to bind (default 127.0.0.1)
  --persistence <m>    none (default, no disk) or aof (appendfsync always, temp dir; redis)
  --json               print only the {"nodes":[…]} line
  -h, --help           show this help

Each node also serves fault controls on /__edgelock/* (faults, stats, pause, resume, kill,
restart) with its own token; see the edgelock/dev documentation.`;

function integer(name: string, value: string | undefined, min: number, max: number) {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= min && n <= max)) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return n;
}

/** Options of `edgelock dev`, or `undefined` for `--help`. */
export function parseDev(
  argv: string[],
): { json: boolean; options: DevClusterOptions } | undefined {
  const { values, positionals } = parse(argv, {
    nodes: { type: "string" },
    port: { type: "string" },
    host: { type: "string" },
    persistence: { type: "string" },
    memory: { type: "boolean", default: false },
    redis: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  });
  if (values.help) return undefined;
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const persistence = values.persistence;
  if (persistence !== undefined && persistence !== "none" && persistence !== "aof") {
    throw new UsageError(`--persistence must be "none" or "aof", got "${persistence}"`);
  }
  if (values.memory && values.redis)
    throw new UsageError("--memory and --redis exclude each other");
  if (values.memory && persistence === "aof") {
    throw new UsageError("--persistence aof needs redis-server: an in-memory node keeps no disk");
  }
  const options: DevClusterOptions = {};
  if (values.memory) options.backend = "memory";
  if (values.redis) options.backend = "redis";
  const nodes = integer("nodes", values.nodes, 1, MAX_NODES);
  const port = integer("port", values.port, 0, 65_535);
  if (nodes !== undefined) options.nodes = nodes;
  if (port !== undefined) options.port = port;
  if (values.host !== undefined) options.host = values.host;
  if (persistence !== undefined) options.persistence = persistence;
  return { json: values.json === true, options };
}

/** The note for an even node count: a majority of 2k tolerates k − 1 failures, as 2k − 1 does. */
export function evenNote(nodes: number): string | undefined {
  if (nodes % 2 !== 0) return undefined;
  const majority = nodes / 2 + 1;
  return `note: ${nodes} nodes need a majority of ${majority}, so they tolerate ${nodes - majority} failed node(s), no more than ${nodes - 1} nodes would; prefer an odd number`;
}

/**
 * What runs the nodes, in one line: `in memory (no redis-server found on PATH)`, `on redis-server
 * (found on PATH)`.
 */
export function backendLine(cluster: Pick<DevCluster, "backend" | "backendReason">): string {
  const where = cluster.backend === "memory" ? "in memory" : "on redis-server";
  return `${where} (${cluster.backendReason})`;
}

/** What an in-memory cluster does not model, and how to get a real server. */
const MEMORY_NOTE = [
  "In memory: no durability (a restart comes back empty), no memory limit or eviction, only the",
  "commands edgelock uses. For real servers: install redis-server (and ioredis), or pass --redis.",
];

function hints(cluster: DevCluster): string {
  const nodes = JSON.stringify(cluster.nodes);
  const first = cluster.nodes[0];
  const memory = cluster.backend === "memory";
  const lines = [
    "",
    `edgelock dev: ${cluster.nodes.length} node(s) running ${backendLine(cluster)}. Ctrl-C stops them.`,
    ...cluster.controls.map(
      (n) =>
        `  node ${n.index}: ${n.url}  (${memory ? "in memory" : `redis-server ${n.redisUrl}`})`,
    ),
    ...(memory ? MEMORY_NOTE : []),
    "",
    "Node, Lambda, tests: export the nodes (read by nodesFromEnv(process.env))",
    `  export EDGELOCK_NODES='${nodes}'`,
    "",
    "Cloudflare Workers (wrangler dev): put this line in .dev.vars",
    `  EDGELOCK_NODES='${nodes}'`,
    "",
    "One node with @upstash/redis (Redis.fromEnv()):",
    `  UPSTASH_REDIS_REST_URL=${first?.url}`,
    `  UPSTASH_REDIS_REST_TOKEN=${first?.token}`,
    "",
    "Faults, per node, e.g. make the next 3 EVALSHA of node 0 answer NOSCRIPT:",
    `  curl -X POST ${first?.url}/__edgelock/faults -H "Authorization: Bearer ${first?.token}" \\`,
    `    -d '{"kind":"noscript","command":"evalsha","count":3}'`,
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * Run `edgelock dev` until SIGINT/SIGTERM; the exit status.
 *
 * @example
 * process.exitCode = await runDev({ json: false, options: { nodes: 3 } });
 */
export async function runDev(parsed: {
  json: boolean;
  options: DevClusterOptions;
}): Promise<number> {
  const note = evenNote(parsed.options.nodes ?? 3);
  if (note !== undefined) process.stderr.write(`edgelock: ${note}\n`);
  let cluster: DevCluster;
  try {
    cluster = await startDevCluster(parsed.options);
  } catch (error) {
    process.stderr.write(`edgelock: ${(error as Error).message}\n`);
    return error instanceof DevClusterError && /option "/.test((error as Error).message) ? 2 : 1;
  }
  process.stdout.write(`${JSON.stringify({ nodes: cluster.nodes })}\n`);
  if (!parsed.json) process.stdout.write(hints(cluster));
  else
    process.stderr.write(`edgelock dev: ${cluster.nodes.length} node(s) ${backendLine(cluster)}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
    whenOrphaned(resolve);
  });
  await cluster.stop();
  return 0;
}

/**
 * Call `stop` once a launcher above this process exits. `npx edgelock dev &` then `kill $!`
 * signals npm alone: npm stops its `sh -c`, which passes nothing on, and launchers below it (the
 * bin script, tsx, `npm run`'s shell) live on under PID 1 with the CLI and its redis-servers. So
 * the CLI watches its chain of launchers — ancestors that are node, npm, npx, tsx or a
 * non-interactive `sh` — and stops as on SIGTERM when one of them is gone. The watch ends at the
 * first other ancestor (the user's shell, a terminal, `nohup`, a service manager): what keeps
 * running there keeps the cluster running.
 */
export function whenOrphaned(stop: () => void, everyMs = 250): void {
  const parent = process.ppid;
  const watched = launchers();
  const timer = setInterval(() => {
    if (process.ppid === parent && watched.every(isAlive)) return;
    clearInterval(timer);
    stop();
  }, everyMs);
  timer.unref();
}

const LAUNCHER = /^(node|nodejs|npm|npx|npm exec.*|npm run.*|tsx|sh|dash)$/;

/** The launchers above this process, nearest first (Linux: from /proc; elsewhere from `ps`). */
function launchers(): number[] {
  const chain: number[] = [];
  for (let pid = process.ppid; pid > 1 && chain.length < 8; ) {
    const info = processInfo(pid);
    if (info === undefined || !LAUNCHER.test(info.name)) break;
    chain.push(pid);
    pid = info.ppid;
  }
  return chain;
}

function processInfo(pid: number): { name: string; ppid: number } | undefined {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may contain spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = stat.lastIndexOf(")");
    const name = stat.slice(stat.indexOf("(") + 1, close);
    const ppid = Number(stat.slice(close + 2).split(" ")[1]);
    return { name, ppid };
  } catch {
    try {
      const out = execFileSync("ps", ["-o", "ppid=,comm=", "-p", String(pid)], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }).trim();
      const match = /^(\d+)\s+(.+)$/.exec(out);
      if (match === null) return undefined;
      return { ppid: Number(match[1]), name: basename(match[2] ?? "") };
    } catch {
      return undefined;
    }
  }
}

/** A running process; an exited one not yet reaped by its parent (a zombie) is gone. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return true;
  }
}
