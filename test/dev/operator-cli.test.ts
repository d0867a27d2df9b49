/**
 * `edgelock inspect` and `edgelock force-release`: the real CLI against a real dev cluster, a
 * held key, a done marker, an absent key, a failed node; output text and exit codes asserted.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { formatMs, keysOf, partsOf } from "../../src/dev/cli/operator";
import { createLocks, once } from "../../src/index";
import { uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });
afterEach(() => {
  for (const control of dev.cluster.controls) control.resume();
});

const CLI = "src/dev/cli.ts";

/** Run the CLI with `env` (no inherited node variables) and optional stdin; stdout, stderr, status. */
function run(args: string[], env: Record<string, string> = {}, input?: string) {
  const clean = { ...process.env };
  delete clean.EDGELOCK_NODES;
  delete clean.UPSTASH_REDIS_REST_URL;
  delete clean.UPSTASH_REDIS_REST_TOKEN;
  const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
    env: { ...clean, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(input ?? "");
  return new Promise<{ stdout: string; stderr: string; status: number | null }>((resolve) =>
    child.on("close", (status) => resolve({ stdout, stderr, status })),
  );
}

const host = (i: number) => new URL(dev.cluster.nodes[i]?.url ?? "").host;
const nodesEnv = () => ({ EDGELOCK_NODES: JSON.stringify(dev.cluster.nodes) });

describe("edgelock inspect", () => {
  it("a held key: per node state, TTL and fence, then the summary; no token anywhere", async () => {
    const prefix = uniquePrefix("cli");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, fencing: true });
    const lock = await locks.acquire("invoice:42", { lease: 30_000 });
    const { stdout, stderr, status } = await run(
      ["inspect", "invoice:42", "--prefix", prefix],
      nodesEnv(),
    );
    expect([status, stderr]).toEqual([0, ""]);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`lock "invoice:42" (prefix "${prefix}") on 3 node(s)`);
    for (const i of [0, 1, 2]) {
      expect(lines[i + 1]).toMatch(
        new RegExp(`^  node ${i}  ${host(i)}\\s+held\\s+ttl \\d+\\.\\d s  fence ${lock.fence}$`),
      );
    }
    expect(lines[4]).toMatch(/^held on 3 of 3 nodes \(a majority\), free in at most \d+\.\d s$/);
    for (const node of dev.cluster.nodes) expect(stdout + stderr).not.toContain(node.token);
    await lock.release();
  });

  it("a done marker, an absent key, a failed node, and --json", async () => {
    const prefix = uniquePrefix("cli");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 300 });
    await once(locks, "job", () => undefined, { retention: 60_000 });
    const done = await run(["inspect", "job", "--prefix", prefix], nodesEnv());
    expect(done.status).toBe(0);
    expect(done.stdout).toMatch(/node 0 .+ done +ttl \d+\.\d s/);
    expect(done.stdout.trimEnd().split("\n").at(-1)).toBe(
      "done on 3 of 3 nodes: its once() job or request finished",
    );
    const absent = await run(["inspect", "nothing", "--prefix", prefix], nodesEnv());
    expect(absent.stdout.trimEnd().split("\n").at(-1)).toBe("free on all 3 nodes");
    dev.cluster.controls[2]?.pause();
    const failed = await run(["inspect", "job", "--prefix", prefix, "--json"], nodesEnv());
    expect(failed.status).toBe(0);
    const json = JSON.parse(failed.stdout) as {
      done: boolean;
      nodes: { state: string; error?: string }[];
    };
    expect(json.done).toBe(true);
    expect(json.nodes.map((n) => n.state)).toEqual(["done", "done", "failed"]);
    expect(json.nodes[2]?.error).toMatch(/^no answer within \d+ ms$/);
    dev.cluster.controls[1]?.pause();
    const majority = await run(["inspect", "job", "--prefix", prefix], nodesEnv());
    expect(majority.status).toBe(1);
    expect(majority.stdout).toMatch(
      new RegExp(`node 1  ${host(1)}\\s+failed\\s+no answer within \\d+ ms`),
    );
    expect(majority.stdout.trimEnd().split("\n").at(-1)).toBe(
      "unknown: 2 of 3 nodes failed, no majority answered",
    );
  });

  it("a lock on several keys, named as errors print it, is shown key by key", async () => {
    const prefix = uniquePrefix("cli");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix });
    const lock = await locks.acquire(["account:2", "account:1"], { lease: 30_000 });
    const busy = await locks.tryAcquire(["account:1", "account:2"]);
    expect(busy).toBeNull();
    const { stdout, status } = await run(
      ["inspect", "account:1, account:2", "--prefix", prefix],
      nodesEnv(),
    );
    expect(status).toBe(0);
    const [note, ...blocks] = stdout.trimEnd().split("\n\n");
    expect(note).toBe('no key "account:1, account:2" on any node; as the keys of one lock:');
    expect(blocks.map((b) => b.split("\n")[0])).toEqual([
      `lock "account:1" (prefix "${prefix}") on 3 node(s)`,
      `lock "account:2" (prefix "${prefix}") on 3 node(s)`,
    ]);
    for (const block of blocks) expect(block).toMatch(/\nheld on 3 of 3 nodes \(a majority\)/);
    const json = await run(
      ["inspect", "account:1", "account:2", "--prefix", prefix, "--json"],
      nodesEnv(),
    );
    const objects = json.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(objects.map((o: { key: string; held: boolean }) => [o.key, o.held])).toEqual([
      ["account:1", true],
      ["account:2", true],
    ]);
    await lock.release();
  });

  it("a key that contains ', ' is one key: inspected and force-released as itself, others untouched", async () => {
    const prefix = uniquePrefix("cli");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix });
    const named = await locks.acquire("customer:Smith, John", { lease: 30_000 });
    const smith = await locks.acquire("customer:Smith", { lease: 30_000 });
    const inspected = await run(
      ["inspect", "customer:Smith, John", "--prefix", prefix],
      nodesEnv(),
    );
    expect(inspected.stdout.split("\n")[0]).toBe(
      `lock "customer:Smith, John" (prefix "${prefix}") on 3 node(s)`,
    );
    expect(inspected.stdout).not.toContain('lock "customer:Smith" ');
    const yes = await run(
      ["force-release", "customer:Smith, John", "--prefix", prefix, "--yes"],
      nodesEnv(),
    );
    expect(yes.stdout.trimEnd().split("\n").at(-1)).toBe("deleted on 3 of 3 nodes");
    expect(await dev.direct(0).get(`${prefix}customer:Smith, John`)).toBeNull();
    expect(await dev.direct(0).get(`${prefix}customer:Smith`)).toBe(smith.token);
    expect(named.token).not.toBe(smith.token);
    await smith.release();
  });

  it("force-release checks every key before it deletes any", async () => {
    const prefix = uniquePrefix("cli");
    const lock = await createLocks({ nodes: dev.cluster.nodes, prefix }).acquire("orders:1", {
      lease: 30_000,
    });
    const bad = await run(
      ["force-release", "orders:1", "orders:2:wait", "--prefix", prefix, "--yes"],
      nodesEnv(),
    );
    expect(bad.status).toBe(2);
    expect(bad.stderr.split("\n")[0]).toBe(
      'edgelock: <key> "orders:2:wait": must not end with ":wait" (the name of a key\'s wait room)',
    );
    expect(bad.stdout).toBe("");
    expect(await dev.direct(0).get(`${prefix}orders:1`)).toBe(lock.token);
    await lock.release();
  });

  it("durations read as people read them", () => {
    expect(
      [0, 850, 9_960, 60_000, 250_000, 3_600_000, 86_390_643, 90_061_000].map(formatMs),
    ).toEqual([
      "0 ms",
      "850 ms",
      "9.9 s",
      "1 min 0 s",
      "4 min 10 s",
      "1 h 0 min",
      "23 h 59 min",
      "1 d 1 h",
    ]);
    expect(keysOf(["customer:Smith, John", "a", "a"])).toEqual(["customer:Smith, John", "a"]);
    expect(partsOf("account:1, account:2")).toEqual(["account:1", "account:2"]);
    expect(partsOf("account:1")).toBeUndefined();
  });

  it("nodes from --nodes <file> (edgelock dev --json output) or UPSTASH_REDIS_REST_*; none → exit 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edgelock-cli-test-"));
    const file = join(dir, "nodes.json");
    writeFileSync(file, JSON.stringify({ nodes: dev.cluster.nodes }));
    const fromFile = await run(["inspect", "k", "--nodes", file]);
    expect(fromFile.stdout).toContain("on 3 node(s)");
    const [first] = dev.cluster.nodes;
    const single = await run(["inspect", "k"], {
      UPSTASH_REDIS_REST_URL: first?.url ?? "",
      UPSTASH_REDIS_REST_TOKEN: first?.token ?? "",
    });
    expect(single.stdout).toContain("on 1 node(s)");
    const none = await run(["inspect", "k"]);
    expect(none.status).toBe(2);
    expect(none.stderr.split("\n")[0]).toBe(
      'edgelock: no nodes: set EDGELOCK_NODES (JSON [{"url","token"}, …]) or UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, or pass --nodes <file>',
    );
    const broken = await run(["inspect", "k"], {
      EDGELOCK_NODES: '[{"url":"x","token":"secret-123"}]',
    });
    expect(broken.status).toBe(2);
    expect(broken.stderr).toBe(
      "edgelock: invalid environment variable `EDGELOCK_NODES[0].url`: expected an http(s) URL string\n",
    );
  });
});

describe("edgelock force-release", () => {
  it("without a terminal and without --yes it refuses (exit 2) and deletes nothing", async () => {
    const prefix = uniquePrefix("cli");
    const lock = await createLocks({ nodes: dev.cluster.nodes, prefix }).acquire("k", {
      lease: 30_000,
    });
    const refused = await run(["force-release", "k", "--prefix", prefix], nodesEnv());
    expect(refused.status).toBe(2);
    expect(refused.stderr.split("\n")[0]).toBe(
      "edgelock: no terminal to confirm on: pass --yes to force-release",
    );
    expect(await dev.direct(0).get(`${prefix}k`)).toBe(lock.token);
  });

  it("--yes deletes on every node and says so per node; a failed node → exit 1", async () => {
    const prefix = uniquePrefix("cli");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 300 });
    await locks.acquire("k", { lease: 30_000 });
    const yes = await run(["force-release", "k", "--prefix", prefix, "--yes"], nodesEnv());
    expect(yes.status).toBe(0);
    const lines = yes.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`force-release lock "k" (prefix "${prefix}")`);
    for (const i of [0, 1, 2])
      expect(lines[i + 1]).toMatch(new RegExp(`^  node ${i}  ${host(i)}\\s+deleted$`));
    expect(lines[4]).toBe("deleted on 3 of 3 nodes");
    const after = await run(["inspect", "k", "--prefix", prefix], nodesEnv());
    expect(after.stdout).toContain("free on all 3 nodes");
    await locks.acquire("k2", { lease: 30_000 });
    dev.cluster.controls[2]?.pause();
    const partial = await run(["force-release", "k2", "--prefix", prefix, "--yes"], nodesEnv());
    expect(partial.status).toBe(1);
    expect(partial.stdout).toMatch(/node 2 .+ no answer within \d+ ms/);
    expect(partial.stdout.trimEnd().split("\n").at(-1)).toBe(
      "deleted on 2 of 3 nodes; 1 failed: the key may remain there until its TTL",
    );
  });
});
