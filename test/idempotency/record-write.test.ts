/**
 * The record write of Idempotency-Key (COMPLETE) against real redis-servers: a write that fails
 * on one round is re-sent until a majority holds the record, so a retry never runs the handler
 * again, even when the node that got the first write is slow at the retry; a write that cannot
 * reach a majority keeps the claim (no release) and tells the app through `onUnrecorded`.
 * Faults aimed at the COMPLETE script only come from a thin `RedisLike` wrapper around a real
 * client (the endpoint cannot aim at one script).
 */
import type { Redis } from "@upstash/redis";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { idempotency } from "../../src/adapters/hono";
import { createLocks, type RedisLike } from "../../src/index";
import { COMPLETE } from "../../src/scripts";
import { eventually, pttlBack, readBack, resetCluster, sleep, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });

afterEach(() => resetCluster(dev.cluster));

/** A node's error answer to COMPLETE, the script not run (as `@upstash/redis` reports a 503). */
function failing(redis: Redis, times: number): RedisLike & { failed: () => number } {
  let failed = 0;
  const fault = (run: () => Promise<unknown>) => {
    if (failed >= times) return run();
    failed += 1;
    const error = new Error("simulated 503: COMPLETE not run");
    error.name = "UpstashError";
    return Promise.reject(error);
  };
  return {
    evalsha: (sha, keys, args) =>
      sha === COMPLETE.sha1
        ? fault(() => redis.evalsha(sha, keys, args))
        : redis.evalsha(sha, keys, args),
    eval: (lua, keys, args) =>
      lua === COMPLETE.lua ? fault(() => redis.eval(lua, keys, args)) : redis.eval(lua, keys, args),
    failed: () => failed,
  };
}

/** A client of node `i` that passes replies through unchanged. */
const client = (i: number) => dev.client(i, { automaticDeserialization: false });

/** An app whose POST /charge counts its runs and answers 201 with the run number. */
function app(nodes: RedisLike[], prefix: string, extra: Record<string, unknown> = {}) {
  const locks = createLocks({ nodes, prefix, requestTimeout: 300, lease: 1_000 });
  let runs = 0;
  const unrecorded: { status: number; nodes: number }[] = [];
  const hono = new Hono();
  hono.post(
    "/charge",
    idempotency({
      locks,
      onUnrecorded: (_c, { status, outcomes }) => {
        unrecorded.push({ status, nodes: outcomes.length });
      },
      ...extra,
    }),
    (c) => {
      runs += 1;
      return c.json({ charge: runs }, 201);
    },
  );
  const send = () =>
    hono.request("/charge", {
      method: "POST",
      body: "amount=5",
      headers: { "Idempotency-Key": '"k"' },
    });
  return { send, runs: () => runs, unrecorded };
}

/** The claim's key on the nodes (one idempotency key per prefix here). */
async function claimKey(prefix: string): Promise<string> {
  let keys: string[] = [];
  await eventually(async () => {
    keys = (await dev.direct(0).keys(`${prefix}idempotency:*`)).filter(
      (key) => !key.endsWith(":wait"),
    );
    return keys.length === 1;
  });
  return keys[0] as string;
}

describe("Idempotency-Key: the record is on a majority before the claim is given up", () => {
  it("one node: a record write answered 503 once is re-sent; a retry after the lease is replayed", async () => {
    const prefix = uniquePrefix("idem-write-1");
    const node = failing(client(0), 1);
    const { send, runs, unrecorded } = app([node], prefix);
    const first = await send();
    expect(first.status).toBe(201);
    const body = await first.text();
    expect(node.failed()).toBe(1);
    // Past the claim's lease (1 s): only a record can stop a second run now.
    await sleep(1_200);
    const retry = await send();
    expect([retry.status, retry.headers.get("idempotency-replayed")]).toEqual([201, "true"]);
    expect(await retry.text()).toBe(body);
    expect(runs()).toBe(1);
    expect(unrecorded).toEqual([]);
  });

  it("three nodes: the write lands on one node only, that node is slow at the retry: no second run", async () => {
    const prefix = uniquePrefix("idem-write-3");
    const nodes = [client(0), failing(client(1), 1), failing(client(2), 1)];
    const { send, runs, unrecorded } = app(nodes, prefix);
    expect((await send()).status).toBe(201);
    // Wait past the claim's lease, then make node 0 (the first write's node) slow.
    await sleep(1_200);
    dev.cluster.controls[0]?.inject({ kind: "latency", ms: 1_500 });
    const retry = await send();
    expect([retry.status, retry.headers.get("idempotency-replayed")]).toEqual([201, "true"]);
    expect(runs()).toBe(1);
    expect(unrecorded).toEqual([]);
    // Every node keeps the record (it was re-sent to the two that failed).
    const values = await readBack(dev, 3, await claimKey(prefix));
    for (const value of values) expect(value).toMatch(/^done:[0-9a-f]{32}\|\{"v":1,/);
  });

  it("a write that never reaches a majority: onUnrecorded is told, the claim is not released", async () => {
    const prefix = uniquePrefix("idem-write-never");
    const nodes = [client(0), failing(client(1), 1_000), failing(client(2), 1_000)];
    const { send, runs, unrecorded } = app(nodes, prefix, { lease: 3_000 });
    const first = await send();
    expect(first.status).toBe(201);
    expect(unrecorded).toEqual([{ status: 201, nodes: 3 }]);
    // Re-sent while the claim was valid: more than one attempt on the failing nodes.
    expect((nodes[1] as ReturnType<typeof failing>).failed()).toBeGreaterThan(1);
    const key = await claimKey(prefix);
    const [values, pttls] = [await readBack(dev, 3, key), await pttlBack(dev, 3, key)];
    expect(values[0]).toMatch(/^done:/);
    // Nodes 1 and 2 still hold the claim's token (never released), until its TTL.
    for (const i of [1, 2]) {
      expect(values[i]).toMatch(/^[0-9a-f]{32}$/);
      expect(pttls[i]).toBeGreaterThan(0);
    }
    // Meanwhile a retry finds the record where it was written, and does not run.
    const retry = await send();
    expect(retry.headers.get("idempotency-replayed")).toBe("true");
    expect(runs()).toBe(1);
  });
});
