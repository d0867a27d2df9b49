/**
 * The nodes' wait queue on real redis-servers (docs/SAFETY.md §6 "The queue"): independent
 * `Locks` instances (one per process, as Lambda invocations or Worker isolates are) are served
 * first come, first served by their place, and a caller that releases and asks again at once
 * queues behind the waiters already there. Orders are asserted, never times: each waiter is known
 * to be registered on every node (its record read back from the queue hash) before the next calls.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks, type Lock, type Locks } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, resetCluster, sleep, uniquePrefix } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });
const opened: Locks[] = [];
afterEach(() => resetCluster(dev.cluster));

const instance = (prefix: string): Locks => {
  const locks = createLocks({
    nodes: dev.cluster.nodes.map((n) => ({ url: n.url, token: n.token })),
    prefix,
    lease: 5_000,
    wait: 15_000,
    retryDelayMax: 500,
  });
  opened.push(locks);
  return locks;
};

/** The waiting calls (fields other than the holder's `^`) in `room` on every node. */
async function waitersEverywhere(room: string): Promise<number[]> {
  return Promise.all(
    Array.from({ length: N }, async (_, i) => {
      const all = await dev.direct(i).hgetall(room);
      return Object.keys(all).filter((field) => field !== "^").length;
    }),
  );
}

/** Wait until `count` calls are registered in `room` on every node. */
const registered = (room: string, count: number) =>
  eventually(async () => (await waitersEverywhere(room)).every((c) => c === count), 10_000);

describe("the wait queue across independent instances", () => {
  it("five instances waiting once each are granted in the order of their calls", async () => {
    const prefix = uniquePrefix("qorder");
    const room = `${prefix}k:wait`;
    const holder = await instance(prefix).acquire("k");
    const order: number[] = [];
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 5; i++) {
      const locks = instance(prefix);
      waits.push(
        locks.acquire("k").then(async (lock) => {
          order.push(i);
          await sleep(20);
          await lock.release();
        }),
      );
      // The next call starts only once this one is in every node's queue: its place is earlier.
      await registered(room, i + 1);
    }
    await holder.release();
    await Promise.all(waits);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    // Every waiter left every queue: only the last holder's `^` field may remain.
    expect(await waitersEverywhere(room)).toEqual([0, 0, 0]);
  }, 60_000);

  it("a caller that releases and calls again at once queues behind the waiters already there", async () => {
    const prefix = uniquePrefix("qagain");
    const room = `${prefix}k:wait`;
    const a = instance(prefix);
    const first = await a.acquire("k");
    const order: string[] = [];
    const hold = async (name: string, lock: Lock) => {
      order.push(name);
      await sleep(20);
      await lock.release();
    };
    const b = instance(prefix)
      .acquire("k")
      .then((lock) => hold("b", lock));
    await registered(room, 1);
    const c = instance(prefix)
      .acquire("k")
      .then((lock) => hold("c", lock));
    await registered(room, 2);
    await first.release();
    const again = a.acquire("k").then((lock) => hold("a", lock));
    await Promise.all([b, c, again]);
    expect(order).toEqual(["b", "c", "a"]);
  }, 60_000);

  it("a waiter's record holds its place, look, listener and hand-off TTL; a grant removes it", async () => {
    const prefix = uniquePrefix("qrecord");
    const room = `${prefix}k:wait`;
    const holder = await instance(prefix).acquire("k");
    const before = Date.now();
    const waiting = instance(prefix).acquire("k");
    await registered(room, 1);
    for (let i = 0; i < N; i++) {
      const all = await dev.direct(i).hgetall(room);
      const [token, value] = Object.entries(all).find(([field]) => field !== "^") ?? [];
      expect(token).toMatch(/^[0-9a-f]{32}$/);
      const [place, deadline, listener, look, p, handMs, fencing] = (value ?? "").split("|");
      // The place is the call's epoch ms, the same on every node; the deadline lies ahead of p.
      expect(Number(place)).toBeGreaterThanOrEqual(before - 1);
      expect(Number(deadline)).toBeGreaterThan(Number(p));
      expect(listener).toMatch(/^[0-9a-f]{12}$/);
      expect(Number(look)).toBeGreaterThanOrEqual(1);
      expect(Number(handMs)).toBeGreaterThan(0);
      expect(Number(handMs)).toBeLessThanOrEqual(5_000);
      expect(fencing).toBe("0");
      // Every queue gets an expiry.
      expect(await dev.direct(i).pttl(room)).toBeGreaterThan(0);
    }
    await holder.release();
    const lock = await waiting;
    expect(await waitersEverywhere(room)).toEqual([0, 0, 0]);
    // The holder's field names the token this node placed.
    for (let i = 0; i < N; i++) {
      const caret = await dev.direct(i).hget(room, "^");
      expect(caret?.split("|")[0]).toBe(await dev.direct(i).get(`${prefix}k`));
    }
    await lock.release();
  }, 60_000);
});
