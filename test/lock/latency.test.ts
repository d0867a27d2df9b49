import { describe, expect, it } from "vitest";
import type { Locks } from "../../src/index";
import { createLocks } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { median, resetCluster, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 5 });
const ROUNDS = 20;

interface Sample {
  acquire: number[];
  release: number[];
}

/** Time one uncontended acquire and its release. */
async function once(locks: Locks, key: string, into: Sample): Promise<void> {
  const t0 = performance.now();
  const lock = await locks.acquire(key);
  const t1 = performance.now();
  const result = await lock.release();
  const t2 = performance.now();
  expect(result.status).toBe("released");
  into.acquire.push(t1 - t0);
  into.release.push(t2 - t1);
}

describe("a slow or stopped minority does not slow acquire or release", () => {
  it("+300 ms latency on 2 of 5 nodes, and a paused node (SIGSTOP)", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const locks = createLocks({ nodes: cluster.nodes, prefix: uniquePrefix("latency") });
    for (let i = 0; i < 5; i++) await once(locks, `warm${i}`, { acquire: [], release: [] });
    const base: Sample = { acquire: [], release: [] };
    const slow: Sample = { acquire: [], release: [] };
    const paused: Sample = { acquire: [], release: [] };
    // Interleaved, so all three see the same machine load (other test files share the CPUs).
    for (let i = 0; i < ROUNDS; i++) {
      await once(locks, `base${i}`, base);

      cluster.controls[3]?.inject({ kind: "latency", ms: 300 });
      cluster.controls[4]?.inject({ kind: "latency", ms: 300 });
      await once(locks, `slow${i}`, slow);
      cluster.controls[3]?.clearFaults();
      cluster.controls[4]?.clearFaults();

      cluster.controls[2]?.pause();
      try {
        await once(locks, `paused${i}`, paused);
      } finally {
        cluster.controls[2]?.resume();
      }
    }
    const medians = (s: Sample) => ({ acquire: median(s.acquire), release: median(s.release) });
    const ref = medians(base);
    const ratios = {
      slowAcquire: median(slow.acquire) / ref.acquire,
      slowRelease: median(slow.release) / ref.release,
      pausedAcquire: median(paused.acquire) / ref.acquire,
      pausedRelease: median(paused.release) / ref.release,
    };
    console.log("median ms", { base: ref, slow: medians(slow), paused: medians(paused) }, ratios);
    for (const ratio of Object.values(ratios)) expect(ratio).toBeLessThanOrEqual(1.5);
    resetCluster(cluster);
  });
});
