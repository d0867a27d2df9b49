/**
 * A one-shot key's fence raise that runs late (docs/SAFETY.md §5 J1), on a real 3-node dev
 * cluster: `once()` with fencing, whose FENCE_RAISE to one node runs after the failed run's
 * release gave every counter the retention. The late raise finds the key absent beside an
 * expiring counter: it must leave the counter's expiry, so no counter of the run lives for ever.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks, once } from "../../src/index";
import {
  evalCalls,
  eventually,
  pttlBack,
  readBack,
  resetCluster,
  uniquePrefix,
} from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const N = 3;
const dev = useDevCluster({ nodes: N });
const RETENTION = 60_000;
const SLOW = 2;

afterEach(() => resetCluster(dev.cluster));

/** Script calls (EVAL and EVALSHA) redis-server `i` has run. */
const scriptCalls = (i: number) => evalCalls(dev, i);

describe("a fence raise that runs after the one-shot run ended", () => {
  it("keeps the counter's expiry on the node where it ran late", async () => {
    const prefix = uniquePrefix("late-raise");
    const locks = createLocks({
      nodes: dev.cluster.nodes,
      prefix,
      requestTimeout: 300,
      lease: 5_000,
      wait: 0,
      fencing: true,
    });
    // Warm up: every script loaded and its SHA known, so the faults below hit ACQUIRE and RAISE.
    await once(locks, "warm", async () => 1, { retention: RETENTION });
    const before = await scriptCalls(SLOW);
    // On the slow node the ACQUIRE runs at once, the FENCE_RAISE after the run's release.
    dev.cluster.controls[SLOW]?.inject({ kind: "latency", ms: 0, count: 1 });
    dev.cluster.controls[SLOW]?.inject({ kind: "latency", ms: 1_500, count: 1 });
    let fence: number | null | undefined = null;
    const failed = await once(
      locks,
      "job",
      async (lock) => {
        fence = lock.fence;
        throw new Error("job failed");
      },
      { retention: RETENTION },
    ).catch((e: Error) => e.message);
    expect(failed).toBe("job failed");
    expect(fence).toBe(1);
    // ACQUIRE, FENCE_RAISE (late) and the release ran on the slow node.
    await eventually(async () => (await scriptCalls(SLOW)) >= before + 3, 10_000);

    expect(await readBack(dev, N, `${prefix}job`)).toEqual([null, null, null]);
    expect(await readBack(dev, N, `${prefix}job:fence`)).toEqual(["1", "1", "1"]);
    const left = await pttlBack(dev, N, `${prefix}job:fence`);
    for (const ms of left) {
      expect(ms).toBeGreaterThan(RETENTION / 2);
      expect(ms).toBeLessThanOrEqual(RETENTION);
    }
  });
});
