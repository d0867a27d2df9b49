/**
 * The wait queue inside workerd (replaces the `wake: true` test): independent clients — one
 * `createLocks` each, as separate isolates or requests would have — wait for one key in the nodes'
 * queues, with their hand-off streams (`@upstash/redis` `subscribe`) opened from the Workers
 * runtime, and a release hands the key from one to the next in the order of their calls, with no
 * look in between (each client's refresh is a minute away).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks, type LockEvent } from "../../src";
import { lingerMs } from "../../src/lock/wait/streams";
import { admin, healAll, nodes, resetStats, sleep } from "./support/cluster";

afterEach(healAll);

/** Commands named `name` run by all nodes since the last `resetStats()`. */
async function commands(name: string): Promise<number> {
  const all = await Promise.all(nodes.map((_, i) => admin(i, "GET", "stats")));
  return all.reduce<number>(
    (sum, s) => sum + ((s as { commands: Record<string, number> }).commands[name] ?? 0),
    0,
  );
}

/** Per node: the waiters' records in a room (the hash's fields but `^`), read over REST. */
async function records(room: string): Promise<string[][]> {
  return Promise.all(
    nodes.map(async ({ url, token }) => {
      const res = await fetch(url, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}` },
        body: JSON.stringify(["HKEYS", room]),
      });
      const { result } = (await res.json()) as { result: string[] };
      return result.filter((field) => field !== "^");
    }),
  );
}

/** Until `count` waiters are registered on every node (polled here, never by the waiters). */
async function queued(room: string, count: number): Promise<void> {
  for (let i = 0; ; i++) {
    if ((await records(room)).every((r) => r.length === count)) return;
    if (i > 400) throw new Error(`never ${count} waiters on every node`);
    await sleep(20);
  }
}

const summary = (events: readonly LockEvent[]) =>
  events.map((e) => (e.type === "acquire" ? `acquire ${e.result} ${e.attempt}` : e.type));

describe("the wait queue in workerd", () => {
  it("independent waiters are handed the key by releases, in the order of their calls, without looking", async () => {
    const prefix = `t:${crypto.randomUUID()}:`;
    // A waiter's refresh is a minute away: within the test, only a hand-off can grant.
    const slow = { prefix, lease: 60_000, retryDelayMax: 60_000, requestTimeout: 2_000 };
    const holder = await createLocks({ nodes, ...slow }).acquire("k");
    await resetStats();
    const room = `${prefix}k:wait`;
    const K = 4;
    const order: number[] = [];
    const events = Array.from({ length: K }, () => [] as LockEvent[]);
    const waiting: Promise<void>[] = [];
    for (let i = 0; i < K; i++) {
      const locks = createLocks({ nodes, ...slow, onEvent: (e) => events[i]?.push(e) });
      waiting.push(
        locks.acquire("k", { wait: 20_000 }).then(async (lock) => {
          order.push(i);
          await sleep(20);
          expect((await lock.release()).status).toBe("released");
        }),
      );
      // Each call registered everywhere before the next one is made: places in call order.
      await queued(room, i + 1);
      await sleep(5);
    }
    expect(await commands("subscribe")).toBe(K * nodes.length);
    expect(order).toEqual([]);
    expect((await holder.release()).status).toBe("released");
    await Promise.all(waiting);
    expect(order).toEqual([0, 1, 2, 3]);
    for (const seen of events) {
      // One refused look, one registration, then handed the key: no look while waiting.
      expect(summary(seen).filter((e) => e.startsWith("acquire"))).toEqual([
        "acquire busy 0",
        "acquire granted 1",
      ]);
    }
    // No stream was opened twice; nobody is left in the queues.
    expect(await commands("subscribe")).toBe(K * nodes.length);
    expect((await records(room)).flat()).toEqual([]);
  });

  it("streams are left to their request here: forgotten when unused, never aborted from JS", () => {
    const runtime = globalThis as { navigator?: { userAgent?: string } };
    expect(runtime.navigator?.userAgent).toBe("Cloudflare-Workers");
    expect(lingerMs()).toBe(-1);
  });
});
