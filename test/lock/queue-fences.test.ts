/**
 * Fences through the queue on 3 redis-servers with fencing on (docs/SAFETY.md §2 P3, §5 F2): a
 * hand-off issues a fence as a grant does and the new holder raises it on a majority, so the
 * fences of successive holders strictly increase, hand-off after hand-off, across independent
 * instances; and the cost of the queue where nobody waits: an uncontended acquire and release
 * still take exactly one request per node each, and open no stream.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks, type Locks } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, landed, resetCluster, sleep, uniquePrefix } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });
afterEach(() => resetCluster(dev.cluster));

const instance = (prefix: string, fencing: boolean): Locks =>
  createLocks({
    nodes: dev.cluster.nodes.map((n) => ({ url: n.url, token: n.token })),
    prefix,
    lease: 5_000,
    wait: 20_000,
    retryDelayMax: 500,
    fencing,
  });

describe("fences and cost through the queue", () => {
  it("fences strictly increase across hand-offs between independent instances", async () => {
    const prefix = uniquePrefix("qfence");
    const fences: number[] = [];
    const handedOn: boolean[] = [];
    let inside = 0;
    let overlaps = 0;
    await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const locks = instance(prefix, true);
        await sleep(i * 10);
        for (let round = 0; round < 3; round++) {
          const lock = await locks.acquire("k");
          if (++inside > 1) overlaps++;
          fences.push(lock.fence as number);
          await sleep(15);
          inside--;
          await lock.release();
        }
      }),
    );
    expect(overlaps).toBe(0);
    expect(fences).toHaveLength(12);
    // The waiters queued (their streams opened): grants came through hand-offs.
    expect(dev.cluster.controls[0]?.stats().commands.subscribe ?? 0).toBeGreaterThan(0);
    for (let i = 1; i < fences.length; i++) {
      handedOn.push((fences[i] as number) > (fences[i - 1] as number));
    }
    expect(handedOn.every(Boolean)).toBe(true);
    // Every node's counter is at least the last fence issued.
    const last = fences.at(-1) as number;
    for (let i = 0; i < N; i++) {
      expect(Number(await dev.direct(i).get(`${prefix}k:fence`))).toBeGreaterThanOrEqual(last);
    }
  }, 60_000);

  it("a queued grant's fence is the one raised on a majority, not a higher counter one node reported", async () => {
    // Node 2 is held by another caller whose counter there is 100; nodes 0 and 1 hand the key to
    // the waiter with low fences. Its raise counts on 0 and 1 only: 100 is on no majority, so a
    // grant with it would let the next holder (a fence drawn on 0 and 1) go below it.
    const prefix = uniquePrefix("qraise");
    const [k, counter] = [`${prefix}k`, `${prefix}k:fence`];
    const holder = await instance(prefix, true).acquire("k");
    await dev.direct(2).set(k, "o".repeat(32), "PX", 60_000);
    await dev.direct(2).set(counter, "100");
    const waiting = instance(prefix, true).acquire("k");
    await eventually(async () => (await dev.direct(0).hkeys(`${k}:wait`)).length > 1, 10_000);
    // Nodes 0 and 1 answer the release and then the waiter's raise late: node 2's reply (100,
    // not counting) comes first.
    for (const i of [0, 1]) {
      dev.cluster.controls[i]?.inject({ kind: "latency", ms: 200, command: "evalsha", count: 2 });
    }
    await holder.release();
    const lock = await waiting;
    expect(lock.fence).toBeLessThan(100);
    expect(lock.fence).toBeGreaterThan(holder.fence as number);
    await lock.release();
    await dev.direct(2).del(k);
    const next = await instance(prefix, true).acquire("k");
    expect(next.fence).toBeGreaterThan(lock.fence as number);
    await next.release();
  }, 30_000);

  it("an uncontended acquire and release cost exactly 2N requests and open no stream", async () => {
    const prefix = uniquePrefix("qcost");
    const locks = instance(prefix, false);
    // Warm: the scripts are known to the nodes (EVALSHA answers at once).
    await (await locks.acquire("warm")).release();
    await landed(dev.cluster, 2 * N);
    resetCluster(dev.cluster);
    const lock = await locks.acquire("k");
    await lock.release();
    expect(await landed(dev.cluster, 2 * N)).toBe(2 * N);
    for (const control of dev.cluster.controls) {
      const { commands } = control.stats();
      expect(commands.subscribe ?? 0).toBe(0);
      expect(commands.evalsha).toBe(2);
    }
  }, 30_000);
});
