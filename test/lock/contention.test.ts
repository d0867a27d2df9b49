import { describe, expect, it } from "vitest";
import { isLockBusyError } from "../../src/errors";
import { createLocks } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, readBack, requests, resetCluster, sleep, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 3 });
// The dev endpoints run in this test process: under a 16-way burst on a shared CI machine a reply
// can take a few hundred ms, so these tests (not about timeouts) give nodes more time.
const requestTimeout = 1_000;

describe("contention", () => {
  it("16 concurrent acquirers with wait: all get it, hold intervals never overlap", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("contention");
    const locks = createLocks({ nodes: cluster.nodes, prefix, lease: 5_000, requestTimeout });
    await (await locks.acquire("warm")).release();
    resetCluster(cluster);
    const intervals: [number, number][] = [];
    const fences = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const lock = await locks.acquire("k", { wait: 20_000 });
        const start = performance.now();
        await sleep(10);
        const end = performance.now();
        intervals.push([start, end]);
        // the lock must still be ours when we let go
        expect((await lock.release()).status).toBe("released");
        return lock.token;
      }),
    );
    expect(new Set(fences).size).toBe(16);
    intervals.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < intervals.length; i++) {
      expect(intervals[i]?.[0]).toBeGreaterThanOrEqual(intervals[i - 1]?.[1] as number);
    }
    const perAcquisition = requests(cluster) / 16;
    console.log(
      `node requests per successful acquisition (incl. release): ${perAcquisition.toFixed(1)}`,
    );
    // Release resolves at a majority; the last node's answer (and late cleanups of failed rounds)
    // may land just after. Well within the 5 s lease, so this is cleanup, not expiry.
    await eventually(
      async () => (await readBack(dev, 3, `${prefix}k`)).every((v) => v === null),
      1_000,
    );
  });

  it("a queued waiter behind a holder that never releases takes the key at its first refresh after the expiry", async () => {
    // In the queue nothing is handed on when a grant expires unreleased: the waiter's refresh
    // (every retryDelayMax: docs/SAFETY.md §6, "The queue") finds the key free. It sends nothing
    // else meanwhile: a look, its stream, its first registration, a refresh per retryDelayMax.
    const { cluster } = dev;
    const prefix = uniquePrefix("crashed-holder");
    const options = { nodes: cluster.nodes, prefix, lease: 1_000, requestTimeout: 300 };
    await createLocks(options).acquire("k"); // never released: a crashed holder
    resetCluster(cluster);
    const lock = await createLocks({ ...options, retryDelayMax: 500 }).acquire("k", {
      wait: 5_000,
    });
    const rounds = cluster.controls[0]?.stats().requests ?? 0;
    console.log(`requests on node 0 while waiting for a crashed holder: ${rounds}`);
    expect(rounds).toBeLessThanOrEqual(8);
    await lock.release();
  });

  it("wait runs out → LockBusyError; no key of ours left behind", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("wait-out");
    const locks = createLocks({ nodes: cluster.nodes, prefix, lease: 5_000, requestTimeout });
    const holder = await locks.acquire("k");
    const started = performance.now();
    const error = await locks.acquire("k", { wait: 300 }).catch((e: unknown) => e);
    const waited = performance.now() - started;
    expect(isLockBusyError(error)).toBe(true);
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(await readBack(dev, 3, `${prefix}k`)).toEqual([
      holder.token,
      holder.token,
      holder.token,
    ]);
    await holder.release();
  });

  it("aborting the caller's signal rejects with its reason and releases", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("abort");
    const locks = createLocks({ nodes: cluster.nodes, prefix, lease: 5_000, requestTimeout });
    const holder = await locks.acquire("k");
    const controller = new AbortController();
    const reason = new Error("client went away");
    setTimeout(() => controller.abort(reason), 100);
    await expect(locks.acquire("k", { wait: 10_000, signal: controller.signal })).rejects.toBe(
      reason,
    );
    await holder.release();
    const aborted = AbortSignal.abort(new Error("already"));
    await expect(locks.acquire("k", { signal: aborted })).rejects.toMatchObject({
      message: "already",
    });
    await sleep(50);
    expect(await readBack(dev, 3, `${prefix}k`)).toEqual([null, null, null]);
  });
});
