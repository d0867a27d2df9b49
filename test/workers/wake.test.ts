/**
 * Wake-up on release inside workerd: the waiter's SSE stream (`@upstash/redis` `subscribe`)
 * opens from the Workers runtime, and a release of another client wakes it long before any
 * poll would.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks, type LockEvent } from "../../src";
import { lingerMs } from "../../src/lock/wait/wake";
import { admin, healAll, nodes, resetStats, sleep } from "./support/cluster";

afterEach(healAll);

/** SSE subscriptions opened on all nodes since the last `resetStats()`. */
async function subscriptions(): Promise<number> {
  const all = await Promise.all(nodes.map((_, i) => admin(i, "GET", "stats")));
  return all.reduce<number>(
    (sum, s) => sum + ((s as { commands: Record<string, number> }).commands.subscribe ?? 0),
    0,
  );
}

describe("wake: true in workerd", () => {
  it("a release of another client wakes the waiter; no polling in between", async () => {
    const prefix = `t:${crypto.randomUUID()}:`;
    // The next poll would be a minute away: only a wake-up can grant within the test.
    const slow = { prefix, lease: 60_000, retryDelayMax: 60_000, requestTimeout: 2_000 };
    const holder = await createLocks({ nodes, ...slow }).acquire("k");
    await resetStats();
    const looks: LockEvent[] = [];
    const waiter = createLocks({ nodes, ...slow, wake: true, onEvent: (e) => looks.push(e) });
    const waiting = waiter.acquire("k", { wait: 20_000 });
    for (let i = 0; (await subscriptions()) === 0; i++) {
      if (i > 200) throw new Error("the waiter never subscribed");
      await sleep(25);
    }
    // Let the stream confirm and the waiter settle into its long sleep.
    for (let i = 0; looks.filter((e) => e.type === "acquire").length < 2; i++) {
      if (i > 200) throw new Error("the waiter never looked again");
      await sleep(25);
    }
    await sleep(100);
    expect((await holder.release()).status).toBe("released");
    const lock = await waiting;
    const acquires = looks.filter((e) => e.type === "acquire");
    expect(
      acquires.filter((e) => e.type === "acquire" && e.result === "busy").length,
    ).toBeLessThanOrEqual(4);
    expect(acquires.at(-1)).toMatchObject({ result: "granted" });
    expect(await subscriptions()).toBe(1);
    expect((await lock.release()).status).toBe("released");
  });

  it("streams are left to their request here: forgotten when unused, never aborted from JS", () => {
    const runtime = globalThis as { navigator?: { userAgent?: string } };
    expect(runtime.navigator?.userAgent).toBe("Cloudflare-Workers");
    expect(lingerMs()).toBe(-1);
  });
});
