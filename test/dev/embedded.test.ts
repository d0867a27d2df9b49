/**
 * The embedded default on a machine without redis-server: `edgelock dev` (auto-detection and
 * `--memory`) and `npm start`, spawned as a newcomer runs them with redis-server hidden from PATH
 * (a folder of symlinks to everything else on PATH: node and npm stay reachable). Each says it runs
 * in memory and works; `--redis` there fails saying what to install.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { createLocks } from "../../src/index";
import { pathWithoutRedis } from "../support/hidden-redis";

const hidden = pathWithoutRedis();
afterAll(() => hidden.remove());

const withoutRedis = () => ({ ...process.env, PATH: hidden.path });

type Lines = AsyncIterator<string>;

/** The lines of a child's stdout. */
const linesOf = (child: ChildProcessWithoutNullStreams): Lines =>
  createInterface({ input: child.stdout })[Symbol.asyncIterator]();

/** Reads lines until one matches `until`; the lines read, that one included. */
async function readUntil(lines: Lines, until: RegExp): Promise<string[]> {
  const read: string[] = [];
  for (let next = await lines.next(); next.done !== true; next = await lines.next()) {
    read.push(next.value);
    if (until.test(next.value)) return read;
  }
  throw new Error(`the output ended before ${until}:\n${read.join("\n")}`);
}

/** Runs to the end: exit status, stdout and stderr. */
async function finish(child: ChildProcessWithoutNullStreams) {
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += String(chunk);
  });
  child.stderr.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

describe("without redis-server on PATH", () => {
  it("`edgelock dev` runs in memory, says so, serves a lock round, and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, ["bin/edgelock.mjs", "dev"], { env: withoutRedis() });
    try {
      const output = linesOf(child);
      const lines = await readUntil(output, /Ctrl-C stops them/);
      const { nodes } = JSON.parse(lines[0] ?? "") as { nodes: { url: string; token: string }[] };
      expect(nodes).toHaveLength(3);
      expect(lines.at(-1)).toBe(
        "edgelock dev: 3 node(s) running in memory (no redis-server found on PATH). Ctrl-C stops them.",
      );
      const rest = await readUntil(output, /or pass --redis/);
      expect(rest.slice(0, 3)).toEqual(
        nodes.map((node, i) => `  node ${i}: ${node.url}  (in memory)`),
      );
      expect(rest.at(-2)).toMatch(/^In memory: no durability \(a restart comes back empty\)/);
      const locks = createLocks({ nodes });
      expect(await locks.using("invoice:1", async (lock) => lock.keys)).toEqual(["invoice:1"]);
      child.kill("SIGTERM");
      const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
      expect(code === 0 || signal === "SIGTERM").toBe(true);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });

  it("`edgelock dev --redis` fails saying how to install redis-server", async () => {
    const child = spawn(process.execPath, ["bin/edgelock.mjs", "dev", "--redis"], {
      env: withoutRedis(),
    });
    const { code, stdout, stderr } = await finish(child);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^edgelock: redis-server not found \(looked for "redis-server"\)/);
  });

  it("`npm start` runs the demo in memory and says so", async () => {
    const child = spawn("npm", ["start"], { env: withoutRedis() });
    const { code, stdout, stderr } = await finish(child);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain(
      "edgelock demo: the nodes run in memory (no redis-server found on PATH)",
    );
    expect(stdout).toContain("  ran 1, skipped 5, failed 0;");
    expect(stdout).toContain(
      '  worker log: cron "0 3 * * *" @ 2026-01-01T03:00:00.000Z: delivery skipped',
    );
    expect(stdout).toMatch(/nodes 1\+2 paused: same invoice +10 +0 +0 +0 +10 +0 /);
    // The Worker's 503 lines: on stdout under the table, grouped and prefixed, not on stderr.
    expect(stdout).toMatch(
      /\n {2}nodes 1\+2 paused: same invoice \(10 × 503\):\n {4}worker log: edgelock: 503 for POST \/invoices\/inv-3\/charge \(lock "invoice:inv-3"\): too few lock nodes answered: no majority \(2 of 3 nodes needed; .*\n {4}worker log: edgelock: 503 for .*\n {4}… 8 more like these\n/,
    );
    expect(stderr).not.toContain("edgelock: 503");
  }, 120_000);
});

describe("edgelock dev --memory (redis-server installed or not)", () => {
  it("--json prints only the nodes on stdout; stderr names the backend", async () => {
    const child = spawn(process.execPath, ["bin/edgelock.mjs", "dev", "--memory", "--json"]);
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    try {
      const [first] = await readUntil(linesOf(child), /^\{/);
      const { nodes } = JSON.parse(first ?? "") as { nodes: { url: string; token: string }[] };
      expect(nodes).toHaveLength(3);
      await expect.poll(() => stderr).toBe("edgelock dev: 3 node(s) in memory (asked for)\n");
      child.kill("SIGTERM");
      const { stdout } = await finish(child);
      expect(stdout).toBe("");
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });

  it("refuses --memory with --redis, and --memory with --persistence aof", async () => {
    for (const [args, message] of [
      [["--memory", "--redis"], "--memory and --redis exclude each other"],
      [["--memory", "--persistence", "aof"], "--persistence aof needs redis-server"],
    ] as const) {
      const child = spawn(process.execPath, ["bin/edgelock.mjs", "dev", ...args]);
      const { code, stderr } = await finish(child);
      expect(code).toBe(2);
      expect(stderr.split("\n")[0]).toContain(message);
    }
  });
});
