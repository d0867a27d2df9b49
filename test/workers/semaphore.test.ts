/**
 * The semaphore inside workerd (docs/SAFETY.md §4c): independent clients — one `createLocks` each,
 * as separate isolates or requests would have — share `permits` slots on the dev cluster's nodes
 * from the Workers runtime: never more holders than permits, a busy semaphore told as
 * `SemaphoreBusyError`, slots freed by releases, and the call's tombstone read back.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks } from "../../src";
import { isSemaphoreBusyError } from "../../src/errors";
import { type Permit, semaphore } from "../../src/semaphore";
import { healAll, nodes, sleep } from "./support/cluster";

afterEach(healAll);

/** `key`'s PTTL on every node, over REST. */
async function pttls(key: string): Promise<number[]> {
  return Promise.all(
    nodes.map(async ({ url, token }) => {
      const res = await fetch(url, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}` },
        body: JSON.stringify(["PTTL", key]),
      });
      return ((await res.json()) as { result: number }).result;
    }),
  );
}

describe("the semaphore in workerd", () => {
  it("bounds independent clients to `permits` holders, and a release frees a slot", async () => {
    const prefix = `t:${crypto.randomUUID()}:`;
    const make = () =>
      semaphore(createLocks({ nodes, prefix, lease: 10_000, requestTimeout: 2_000 }), "api", {
        permits: 2,
      });
    const held = (await Promise.all([0, 1, 2, 3].map(() => make().tryAcquire()))).filter(
      (p): p is Permit => p !== null,
    );
    expect(held.length).toBeLessThanOrEqual(2);
    while (held.length < 2) held.push(await make().acquire({ wait: 5_000 }));
    expect(held.map((p) => p.slot).sort()).toEqual([0, 1]);
    const busy = await make()
      .acquire()
      .catch((e: unknown) => e);
    expect(isSemaphoreBusyError(busy)).toBe(true);
    const first = held[0] as Permit;
    await first.release({ settled: true });
    for (const pttl of await pttls(`${prefix}api:permits:void:${first.token}`)) {
      expect(pttl).toBeGreaterThan(0);
    }
    const next = await make().tryAcquire();
    expect(next?.slot).toBe(first.slot);
    await Promise.all([next, held[1]].map((p) => p?.release({ settled: true })));
    expect((await make().inspect()).free).toBe(2);
  });

  it("runs a burst of 8 `using` callers, at most 3 at once", async () => {
    const prefix = `t:${crypto.randomUUID()}:`;
    let running = 0;
    let most = 0;
    const runs = Array.from({ length: 8 }, () =>
      semaphore(createLocks({ nodes, prefix, lease: 10_000, retryDelayMax: 100 }), "jobs", {
        permits: 3,
      }).using(
        async () => {
          running++;
          most = Math.max(most, running);
          await sleep(50);
          running--;
        },
        { wait: 30_000 },
      ),
    );
    await Promise.all(runs);
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBeGreaterThanOrEqual(2);
  });
});
