/**
 * Waiting for a permit in the semaphore's room (docs/SAFETY.md §4c "Waiting"), on three
 * redis-servers: independent callers at capacity are handed the slots that releases free, in the
 * order of their calls, with no look of their own (their refresh is a minute away), each hand-off
 * naming its slot; a hand-off message's slot field is parsed; a waiter that gives up or is aborted
 * leaves no record and no token behind.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks } from "../../src/index";
import { parseHandoff } from "../../src/lock/wait/streams";
import { type Permit, semaphore } from "../../src/semaphore/index";
import { readBack, resetCluster, sleep, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const N = 3;
const dev = useDevCluster({ nodes: N });
afterEach(() => resetCluster(dev.cluster));

/** Per node: the waiters' records in the room (its fields but the holders `^<j>`). */
async function records(room: string): Promise<string[][]> {
  const all = await Promise.all(Array.from({ length: N }, (_, i) => dev.direct(i).hkeys(room)));
  return all.map((fields) => fields.filter((f) => !f.startsWith("^")));
}

async function registered(room: string, count: number): Promise<void> {
  for (let i = 0; ; i++) {
    if ((await records(room)).every((r) => r.length === count)) return;
    if (i > 500) throw new Error(`never ${count} waiters on every node`);
    await sleep(10);
  }
}

describe("waiting for a permit", () => {
  it("parses a hand-off's slot, and refuses a malformed one", () => {
    const token = "0123456789abcdef0123456789abcdef";
    expect(parseHandoff(`${token}|3|240|1000|0|2`)).toEqual({
      token,
      look: 3,
      gap: 240,
      handMs: 1000,
      fence: 0,
      slot: 2,
    });
    expect(parseHandoff(`${token}|3|240|1000|0`)).not.toHaveProperty("slot");
    expect(parseHandoff(`${token}|3|240|1000|0|x`)).toBeUndefined();
    expect(parseHandoff(`${token}|3|240|1000|0|1|1`)).toBeUndefined();
  });

  it("hands freed slots to independent waiters in the order of their calls, without a look of theirs", async () => {
    const prefix = uniquePrefix("sem-queue");
    // A refresh a minute away: within the test only a hand-off can grant.
    const slow = { nodes: dev.cluster.nodes, prefix, lease: 60_000, retryDelayMax: 60_000 };
    const make = () =>
      semaphore(createLocks({ ...slow, requestTimeout: 2_000 }), "q", { permits: 2 });
    const held = [await make().acquire(), await make().acquire()];
    const room = `${prefix}q:permits:wait`;
    const order: number[] = [];
    const waiting: Promise<Permit>[] = [];
    for (let i = 0; i < 4; i++) {
      waiting.push(
        make()
          .acquire({ wait: 50_000 })
          .then((p) => {
            order.push(i);
            return p;
          }),
      );
      await registered(room, i + 1);
    }
    const got: Permit[] = [];
    for (let round = 0; round < 2; round++) {
      const freed = held.map((p) => p.slot).sort();
      await Promise.all(held.map((p) => p.release()));
      const next = await Promise.all(waiting.splice(0, 2));
      // Each freed slot went to one of the next two waiters, each held on a majority.
      expect(next.map((p) => p.slot).sort()).toEqual(freed);
      for (const p of next) {
        const values = await readBack(dev, N, `${prefix}q:permit:${p.slot}`);
        expect(values.filter((v) => v === p.token).length).toBeGreaterThanOrEqual(2);
      }
      held.splice(0, 2, ...next);
      got.push(...next);
    }
    // Two slots freed at once go to the first two waiters, in either order between them.
    expect([order.slice(0, 2).sort(), order.slice(2).sort()]).toEqual([
      [0, 1],
      [2, 3],
    ]);
    await Promise.all(held.map((p) => p.release({ settled: true })));
    expect((await records(room)).every((r) => r.length === 0)).toBe(true);
    expect(got).toHaveLength(4);
  });

  it("a waiter that gives up leaves no record and no token on any slot", async () => {
    const prefix = uniquePrefix("sem-giveup");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, lease: 10_000 });
    const sem = semaphore(locks, "g", { permits: 1 });
    const holder = await sem.acquire();
    const error = await semaphore(createLocks({ nodes: dev.cluster.nodes, prefix }), "g", {
      permits: 1,
    })
      .acquire({ wait: 400 })
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe("SemaphoreBusyError");
    await sleep(100);
    expect((await records(`${prefix}g:permits:wait`)).every((r) => r.length === 0)).toBe(true);
    await holder.release({ settled: true });
    expect(await readBack(dev, N, `${prefix}g:permit:0`)).toEqual([null, null, null]);
  });

  it("a waiter aborted by its signal rejects with the reason and leaves no record or token", async () => {
    const prefix = uniquePrefix("sem-abort");
    const make = () =>
      semaphore(createLocks({ nodes: dev.cluster.nodes, prefix }), "a", { permits: 1 });
    const holder = await make().acquire();
    const controller = new AbortController();
    const waiting = make()
      .acquire({ wait: 30_000, signal: controller.signal })
      .catch((e: unknown) => e);
    await registered(`${prefix}a:permits:wait`, 1);
    controller.abort(new Error("client went away"));
    expect(((await waiting) as Error).message).toBe("client went away");
    await holder.release({ settled: true });
    await sleep(100);
    expect((await records(`${prefix}a:permits:wait`)).every((r) => r.length === 0)).toBe(true);
    expect(await readBack(dev, N, `${prefix}a:permit:0`)).toEqual([null, null, null]);
  });

  // As a lock's acquire: the abort does not wait for the look in flight (a request timeout at
  // worst); the permit that look wins is released behind the caller's back.
  it("an abort during the first look rejects at once; the permit it wins is released", async () => {
    const prefix = uniquePrefix("sem-abort-look");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 2_000 });
    const sem = semaphore(locks, "l", { permits: 1 });
    for (const control of dev.cluster.controls) control.inject({ kind: "latency", ms: 1_000 });
    const controller = new AbortController();
    const start = performance.now();
    const waiting = sem.acquire({ signal: controller.signal }).catch((e: unknown) => e);
    await sleep(100);
    controller.abort(new Error("client went away"));
    expect(((await waiting) as Error).message).toBe("client went away");
    const rejectedAfter = performance.now() - start;
    resetCluster(dev.cluster);
    // It rejected before the look answered (1 s per request): it used to wait for it.
    expect(rejectedAfter / 1_000).toBeLessThan(0.5);
    for (let i = 0; ; i++) {
      const held = await readBack(dev, N, `${prefix}l:permit:0`);
      if (held.every((v) => v === null)) break;
      if (i > 300) throw new Error(`the permit stayed: ${held.join(", ")}`);
      await sleep(10);
    }
    expect(await sem.inspect()).toMatchObject({ held: 0 });
  });
});
