import { describe, expect, it } from "vitest";
import { createLocks } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, landed, readBack, resetCluster, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 5 });

describe("fencing", () => {
  it.each([1, 3, 5])(
    "fence tokens strictly increase across holders on %i node(s), with a minority failing between",
    async (n) => {
      const { cluster } = dev;
      resetCluster(cluster);
      const locks = createLocks({
        nodes: cluster.nodes.slice(0, n),
        prefix: uniquePrefix("fence"),
        fencing: true,
      });
      const minority = Math.floor((n - 1) / 2);
      const fences: number[] = [];
      for (let i = 0; i < 8; i++) {
        resetCluster(cluster);
        // a different minority is down for each acquisition
        for (let j = 0; j < minority; j++) {
          cluster.controls[(i + j) % n]?.inject({ kind: "status", status: 503 });
        }
        const lock = await locks.acquire("k");
        expect(lock.fence).toBeTypeOf("number");
        fences.push(lock.fence as number);
        await lock.release();
      }
      resetCluster(cluster);
      for (let i = 1; i < fences.length; i++) {
        expect(fences[i]).toBeGreaterThan(fences[i - 1] as number);
      }
    },
  );

  it("fence = max over the granting majority, raised before the lock is returned", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const prefix = uniquePrefix("diverged");
    const locks = createLocks({ nodes: cluster.nodes.slice(0, 3), prefix, fencing: true });
    const counter = `${prefix}k:fence`;
    // node 0's counter is ahead; node 2 is slow, so the granting majority is {0, 1}
    await dev.direct(0).set(counter, "10");
    cluster.controls[2]?.inject({ kind: "latency", ms: 150 });
    const first = await locks.acquire("k");
    expect(first.fence).toBe(11);
    // raised before acquire() returned: node 1 (granted with 1) now holds 11 too
    expect(await dev.direct(1).get(counter)).toBe("11");
    await first.release();
    resetCluster(cluster);
    // the node that issued the max is down now: the other two must still go above it
    cluster.controls[0]?.inject({ kind: "status", status: 503 });
    const second = await locks.acquire("k");
    expect(second.fence).toBeGreaterThan(11);
    await second.release();
    resetCluster(cluster);
  });

  it.each([
    [1, 2],
    [3, 9],
    [5, 15],
  ])("uncontended fenced acquire + release on %i node(s) costs %i requests", async (n, cost) => {
    const { cluster } = dev;
    const prefix = uniquePrefix("fence-cost");
    const locks = createLocks({ nodes: cluster.nodes.slice(0, n), prefix, fencing: true });
    await (await locks.acquire("warm")).release();
    // The warm-up release is decided by a majority: its last request must land before counting
    // (one full run under load counted 10 instead of 9).
    await eventually(async () => (await readBack(dev, n, `${prefix}warm`)).every((v) => !v));
    resetCluster(cluster);
    const lock = await locks.acquire("k");
    await lock.release();
    // A slow node's release may land after the majority's: count once all of it has.
    expect(await landed(cluster, cost)).toBe(cost);
  });
});
