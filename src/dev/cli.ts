/**
 * The `edgelock` command line (package `bin`; tsup adds the shebang to `dist/dev/cli.js`).
 *
 * `edgelock dev [--nodes N] [--port P] [--host H] [--persistence none|aof] [--json]` starts a dev
 * cluster in the foreground, prints `{"nodes":[{"url","token"},…]}` as the first line of stdout
 * (with `--json`, nothing else), then hints for `.dev.vars` and `UPSTASH_REDIS_REST_*`, and stops
 * everything on SIGINT/SIGTERM. Bad arguments exit with status 2.
 *
 * @example
 * ```sh
 * npx edgelock dev --nodes 3
 * npx tsx src/dev/cli.ts dev --json --nodes 2 | head -1
 * ```
 *
 * @module
 */

import { parseArgs } from "node:util";
import { startDevCluster } from "./cluster";
import { DevClusterError } from "./errors";
import type { DevCluster, DevClusterOptions } from "./types";

const USAGE = `Usage: edgelock dev [options]

Starts N redis-server processes on loopback, each behind an Upstash-compatible REST endpoint,
and prints their {url, token} configuration. Ctrl-C (SIGINT) or SIGTERM stops everything.

Options:
  --nodes <n>          number of nodes (default 3)
  --port <p>           REST port of node 0; node i gets p+i (default: free ephemeral ports)
  --host <h>           interface to bind (default 127.0.0.1)
  --persistence <m>    none (default, no disk) or aof (appendfsync always, temp dir)
  --json               print only the {"nodes":[…]} line
  -h, --help           show this help

Each node also serves fault controls on /__edgelock/* (faults, stats, pause, resume, kill,
restart) with its own token; see the edgelock/dev documentation.`;

class UsageError extends Error {}

function integer(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value))
    throw new UsageError(`--${name} must be a non-negative integer, got "${value}"`);
  return Number(value);
}

function parse(argv: string[]): { help: boolean; json: boolean; options: DevClusterOptions } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      nodes: { type: "string" },
      port: { type: "string" },
      host: { type: "string" },
      persistence: { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return { help: true, json: false, options: {} };
  const [command, ...rest] = positionals;
  if (command !== "dev") {
    throw new UsageError(
      command === undefined ? "missing command" : `unknown command "${command}"`,
    );
  }
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  const persistence = values.persistence;
  if (persistence !== undefined && persistence !== "none" && persistence !== "aof") {
    throw new UsageError(`--persistence must be "none" or "aof", got "${persistence}"`);
  }
  const options: DevClusterOptions = {};
  const nodes = integer("nodes", values.nodes);
  const port = integer("port", values.port);
  if (nodes !== undefined) options.nodes = nodes;
  if (port !== undefined) options.port = port;
  if (values.host !== undefined) options.host = values.host;
  if (persistence !== undefined) options.persistence = persistence;
  return { help: false, json: values.json, options };
}

function hints(cluster: DevCluster): string {
  const nodes = JSON.stringify(cluster.nodes);
  const first = cluster.nodes[0];
  const lines = [
    "",
    `edgelock dev: ${cluster.nodes.length} node(s) running. Ctrl-C stops them.`,
    ...cluster.controls.map((n) => `  node ${n.index}: ${n.url}  (redis-server ${n.redisUrl})`),
    "",
    "Cloudflare Workers (wrangler dev): put this line in .dev.vars",
    `  EDGELOCK_NODES='${nodes}'`,
    "",
    "Node, one node with @upstash/redis (Redis.fromEnv()):",
    `  UPSTASH_REDIS_REST_URL=${first?.url}`,
    `  UPSTASH_REDIS_REST_TOKEN=${first?.token}`,
    "",
    "Faults, per node, e.g. make the next 3 EVALSHA of node 0 answer NOSCRIPT:",
    `  curl -X POST ${first?.url}/__edgelock/faults -H "Authorization: Bearer ${first?.token}" \\`,
    `    -d '{"kind":"noscript","command":"evalsha","count":3}'`,
  ];
  return `${lines.join("\n")}\n`;
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    process.stderr.write(`edgelock: ${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let cluster: DevCluster;
  try {
    cluster = await startDevCluster(parsed.options);
  } catch (error) {
    process.stderr.write(`edgelock: ${(error as Error).message}\n`);
    return error instanceof DevClusterError && /option "/.test((error as Error).message) ? 2 : 1;
  }
  process.stdout.write(`${JSON.stringify({ nodes: cluster.nodes })}\n`);
  if (!parsed.json) process.stdout.write(hints(cluster));
  await new Promise<void>((resolve) => {
    const shutdown = () => resolve();
    process.once("SIGINT", shutdown);
    process.once("SIGTERM", shutdown);
  });
  await cluster.stop();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`edgelock: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
