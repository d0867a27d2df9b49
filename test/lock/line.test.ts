/**
 * Callers of one `Locks` instance that want the same key line up: the first in line waits for the
 * grant held here instead of polling, and that grant's release hands the key over in the same
 * requests (HANDOVER: one request per node for release + acquire).
 */
import { describe, expect, it } from "vitest";
import { isLockBusyError, type LockBusyError } from "../../src/errors";
import { createLocks, type Lock, type Locks } from "../../src/index";
import { HANDOVER } from "../../src/scripts";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, readBack, requests, resetCluster, sleep, uniquePrefix } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });
// The endpoints run in this test process: give nodes time on a loaded CI machine (a request that
// times out ends a hand-over's chain: the next caller then looks for itself, N requests more).
const requestTimeout = 2_000;

function setup(name: string, options: { lease?: number; fencing?: boolean } = {}) {
  resetCluster(dev.cluster);
  const prefix = uniquePrefix(name);
  const locks = createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout, ...options });
  return { locks, full: `${prefix}k` };
}

/**
 * Acquire `k` and wait until every node holds the grant: a round is decided at a majority, and a
 * reply still in flight would otherwise be counted after the caller reset the statistics.
 */
async function holdEverywhere(locks: Locks, full: string): Promise<Lock> {
  const lock = await locks.acquire("k");
  await eventually(async () => (await readBack(dev, N, full)).every((v) => v === lock.token));
  return lock;
}

/** Requests served settle at exactly `count` (the last may land just after a round resolved). */
async function exactly(count: number): Promise<void> {
  await eventually(() => requests(dev.cluster) >= count);
  await sleep(50);
  const served = JSON.stringify(dev.cluster.controls.map((c) => c.stats().commands));
  expect(requests(dev.cluster), `commands served per node: ${served}`).toBe(count);
}

describe("waiting behind a grant of the same Locks", () => {
  it("sends nothing while waiting, then takes over in the release's N requests", async () => {
    const { locks, full } = setup("handover");
    await (await locks.acquire("warm")).release();
    const holder = await holdEverywhere(locks, full);
    resetCluster(dev.cluster);
    const waiting = locks.acquire("k", { wait: 5_000 });
    await sleep(200);
    expect(requests(dev.cluster)).toBe(0);
    expect((await holder.release()).status).toBe("released");
    const lock = await waiting;
    await exactly(N);
    expect(await readBack(dev, N, full)).toEqual(Array(N).fill(lock.token));
    expect(dev.cluster.controls.map((c) => c.stats().commands)).toEqual(
      Array(N).fill({ eval: 1 }), // first use of HANDOVER on each node: EVAL with the source
    );
    expect((await lock.release()).status).toBe("released");
    await exactly(2 * N);
    await eventually(async () => (await readBack(dev, N, full)).every((v) => v === null));
  });

  it("callers get the lock in arrival order; every section costs N requests under jitter", async () => {
    const { locks, full } = setup("fifo");
    await (await locks.acquire("warm")).release();
    const holder = await holdEverywhere(locks, full);
    resetCluster(dev.cluster);
    for (const control of dev.cluster.controls) control.inject({ kind: "latency", ms: [0, 15] });
    const order: number[] = [];
    const intervals: [number, number][] = [];
    const waiters = Array.from({ length: 5 }, async (_, i) => {
      await sleep(i * 20);
      const lock = await locks.acquire("k", { wait: 10_000 });
      const start = performance.now();
      order.push(i);
      await sleep(5);
      intervals.push([start, performance.now()]);
      expect((await lock.release()).status).toBe("released");
    });
    await sleep(150);
    await holder.release();
    await Promise.all(waiters);
    const served = JSON.stringify(dev.cluster.controls.map((c) => c.stats().commands));
    expect(order, `commands served per node: ${served}`).toEqual([0, 1, 2, 3, 4]);
    for (let i = 1; i < intervals.length; i++) {
      expect(intervals[i]?.[0]).toBeGreaterThanOrEqual(intervals[i - 1]?.[1] as number);
    }
    // 5 handovers and the last waiter's plain release: one request per node each.
    await exactly(6 * N);
    resetCluster(dev.cluster);
    await eventually(async () => (await readBack(dev, N, full)).every((v) => v === null));
  });

  it("with fencing the fence still goes up at every handover", async () => {
    const { locks } = setup("handover-fence", { fencing: true });
    const holder = await locks.acquire("k");
    const waiting = locks.acquire("k", { wait: 5_000 });
    await sleep(50);
    await holder.release();
    const lock = await waiting;
    expect(lock.fence).toBeGreaterThan(holder.fence as number);
    const third = locks.acquire("k", { wait: 5_000 });
    await sleep(50);
    await lock.release();
    const last = await third;
    expect(last.fence).toBeGreaterThan(lock.fence as number);
    await last.release();
  });

  it("a wait that runs out in line: LockBusyError with the holder's remaining time, no request", async () => {
    const { locks, full } = setup("line-timeout", { lease: 5_000 });
    const holder = await holdEverywhere(locks, full);
    resetCluster(dev.cluster);
    const error = (await locks
      .acquire("k", { wait: 200 })
      .catch((e: unknown) => e)) as LockBusyError;
    expect(isLockBusyError(error)).toBe(true);
    expect(error.retryAfter).toBeGreaterThan(4_000);
    expect(error.retryAfter).toBeLessThanOrEqual(5_000);
    expect(requests(dev.cluster)).toBe(0);
    await holder.release();
  });

  it("an aborted waiter leaves the line; the one behind it gets the handover", async () => {
    const { locks, full } = setup("line-abort");
    const holder = await locks.acquire("k");
    const controller = new AbortController();
    const reason = new Error("gone");
    const first = locks.acquire("k", { wait: 5_000, signal: controller.signal });
    await sleep(20);
    const second = locks.acquire("k", { wait: 5_000 });
    await sleep(20);
    controller.abort(reason);
    await expect(first).rejects.toBe(reason);
    await holder.release();
    const lock = await second;
    expect(await readBack(dev, N, full)).toEqual(Array(N).fill(lock.token));
    await lock.release();
  });

  it("a grant that is lost (never released) lets the next caller in once the key expires", async () => {
    const { locks } = setup("line-lost", { lease: 400 });
    const abandoned: Lock = await locks.acquire("k");
    const started = performance.now();
    const lock = await locks.acquire("k", { wait: 3_000 });
    expect(abandoned.signal.aborted).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_500);
    await lock.release();
  });
});

describe("the line's order is the wait room's order", () => {
  it("callers whose first looks answer out of order still go in call order, never refused by a reservation for one of their own", async () => {
    const { locks: other, full } = setup("line-place");
    const prefix = full.slice(0, -1);
    await (await other.acquire("warm")).release();
    const reserved: string[] = [];
    const watched = createLocks({
      nodes: dev.cluster.nodes,
      prefix,
      requestTimeout,
      onEvent(event) {
        if (event.type !== "acquire") return;
        if (event.outcomes.some((o) => o.reserved === true)) reserved.push(event.result);
      },
    });
    await (await watched.acquire("warm")).release();
    const holder = await holdEverywhere(other, full);
    resetCluster(dev.cluster);
    // A's first look (the next request on every node) answers after B's: B joins the line first.
    for (const control of dev.cluster.controls) {
      control.inject({ kind: "latency", ms: 300, count: 1 });
    }
    const order: string[] = [];
    const caller = async (name: string) => {
      const lock = await watched.acquire("k", { wait: 10_000 });
      order.push(name);
      await sleep(5);
      expect((await lock.release()).status).toBe("released");
    };
    const a = caller("A");
    await sleep(30);
    const b = caller("B");
    await sleep(30);
    const c = caller("C"); // behind B in the line: waits without looking
    await sleep(400);
    await holder.release();
    await Promise.all([a, b, c]);
    expect(order).toEqual(["A", "B", "C"]);
    // Before the fix: A's place came first in the room, B led the line, and a release by this
    // instance reserved the key for A (who was not looking) while C, first in line, was refused.
    expect(reserved).toEqual([]);
    await eventually(async () => (await readBack(dev, N, full)).every((v) => v === null));
  });
});

describe("the HANDOVER script on a real node", () => {
  const T1 = "0123456789abcdef0123456789abcdef";
  const T2 = "fedcba9876543210fedcba9876543210";
  const keys = () => {
    const key = `t:handover:${crypto.randomUUID()}`;
    return [key, `${key}:fence`] as const;
  };
  // No waiter entry, no place: nothing in the room to serve first (see wake.test.ts for that).
  const handover = (key: string, fence: string, fencing = "1") =>
    dev
      .direct(0)
      .eval(
        HANDOVER.lua,
        3,
        key,
        fence,
        `${key}:wait`,
        T1,
        T2,
        "5000",
        fencing,
        "",
        "0",
        "250",
        "",
      );

  it("ours → released and granted to the next token (fence counted once, even when re-sent)", async () => {
    const [key, fence] = keys();
    await dev.direct(0).set(key, T1, "PX", 60_000);
    await dev.direct(0).set(fence, "7");
    expect(await handover(key, fence)).toEqual([1, 8, 1]);
    expect(await dev.direct(0).get(key)).toBe(T2);
    const pttl = await dev.direct(0).pttl(key);
    expect(pttl).toBeGreaterThan(4_000);
    expect(pttl).toBeLessThanOrEqual(5_000);
    expect(await handover(key, fence)).toEqual([1, 8, 1]); // re-sent
    expect(await dev.direct(0).get(fence)).toBe("8");
  });

  it("absent (our grant expired) → granted, released 0; someone else's or a done marker → left alone", async () => {
    const [key, fence] = keys();
    expect(await handover(key, fence, "0")).toEqual([1, 0, 0]);
    expect(await dev.direct(0).get(key)).toBe(T2);
    const [other] = keys();
    await dev.direct(0).set(other as string, "someone-else", "PX", 9_000);
    const [flag, pttl, released] = (await handover(other as string, fence)) as number[];
    expect([flag, released]).toEqual([0, -1]);
    expect(pttl).toBeGreaterThan(8_000);
    expect(await dev.direct(0).get(other as string)).toBe("someone-else");
    const [done] = keys();
    await dev.direct(0).set(done as string, `done:${T1}`, "PX", 60_000);
    expect(((await handover(done as string, fence)) as number[])[0]).toBe(2);
    expect(await dev.direct(0).get(done as string)).toBe(`done:${T1}`);
  });
});
