/**
 * A split is not "at capacity" (docs/SAFETY.md §4c, the first look): with permits 2 on 3 nodes,
 * node 2 down and node 0 keeping a stale slot-0 token (a crashed caller's look that reached only
 * node 0), no permit is held, yet a look places the call on slot 1 at node 0 and on slot 0 at
 * node 1: no slot on a majority. The call's own placements are not refusals, so this is never a
 * `SemaphoreBusyError` (`tryAcquire` never `null`, `held` never counts them); a caller that waits
 * retries with its rotation started at the next slot and gets slot 1 on nodes 0 and 1. And the
 * other way round: both permits held, each on a different pair of nodes, every node up — a look
 * may still split over the free remnants, and that is at capacity (`null`, `SemaphoreBusyError`).
 * Real redis-servers through the REST endpoint.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks, isSemaphoreBusyError, type Permit, semaphore } from "../../src/index";
import { readBack, resetCluster, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });
afterEach(() => resetCluster(dev.cluster));

/** A fresh semaphore key with a stale slot-0 token on node 0 only, and node 2 answering 503. */
async function stale(prefix: string, key: string): Promise<void> {
  await dev.direct(0).set(`${prefix}${key}:permit:0`, "stale", "PX", 10_000);
  dev.cluster.controls[2]?.inject({ kind: "status", status: 503 });
}

describe("a split over slots with a node down", () => {
  it("is never reported at capacity, and a caller that waits gets the free slot", async () => {
    const prefix = uniquePrefix("sem-split");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, retryDelayMax: 100 });
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) {
      const key = `s${i}`;
      await stale(prefix, key);
      const sem = semaphore(locks, key, { permits: 2 });
      const tried = (await sem.tryAcquire().catch((e: unknown) => e)) as Permit | Error | null;
      // Granted (the rotation began at slot 1), or a QuorumError (no slot on a majority, a node
      // down): never null, which would say both permits are held.
      expect(tried).not.toBeNull();
      expect(isSemaphoreBusyError(tried)).toBe(false);
      if (tried instanceof Error) {
        expect(tried.name).toBe("QuorumError");
        expect(tried.message).not.toContain("held by another caller");
        outcomes.push("quorum");
      } else if (tried !== null) {
        outcomes.push(`granted ${tried.slot}`);
        await tried.release();
      }
      const waited = await sem.acquire({ wait: 2_000 });
      expect(waited.slot).toBe(1);
      const values = await readBack(dev, 2, `${prefix}${key}:permit:1`);
      expect(values).toEqual([waited.token, waited.token]);
      await waited.release();
      resetCluster(dev.cluster);
    }
    // Every try ended one of the two ways; which one depends on the call's random rotation.
    expect(outcomes.every((o) => o === "quorum" || o === "granted 1")).toBe(true);
  });
});

describe("at capacity, a look split over the free remnants", () => {
  it("is at capacity: tryAcquire null, acquire() SemaphoreBusyError after its wait", async () => {
    const prefix = uniquePrefix("sem-full");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, retryDelayMax: 100 });
    for (let i = 0; i < 6; i++) {
      const key = `f${i}`;
      // Slot 0 held on nodes 1 and 2, slot 1 on nodes 0 and 2: both permits held on a majority,
      // and each of nodes 0 and 1 has one slot free.
      for (const [node, slot] of [
        [1, 0],
        [2, 0],
        [0, 1],
        [2, 1],
      ] as const) {
        await dev.direct(node).set(`${prefix}${key}:permit:${slot}`, `holder${slot}`, "PX", 10_000);
      }
      const sem = semaphore(locks, key, { permits: 2 });
      expect(await sem.tryAcquire()).toBeNull();
      const error = await sem.acquire({ wait: 300 }).catch((e: unknown) => e);
      expect(isSemaphoreBusyError(error), String(error)).toBe(true);
      expect(error).toMatchObject({ permits: 2 });
    }
  });
});
