import { describe, expect, it, vi } from "vitest";
import { isLockBusyError, isQuorumError } from "../../src/errors";
import { createLocks } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { readBack, resetCluster, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 5 });

type Way = "held" | "status";
const cases: [number, number, Way][] = [];
for (const n of [1, 3, 5]) {
  for (let mask = 0; mask < 1 << n; mask++) {
    cases.push([n, mask, "held"], [n, mask, "status"]);
  }
}

const bits = (mask: number, n: number) =>
  Array.from({ length: n }, (_, i) => (mask & (1 << i)) !== 0);

describe("quorum over every subset of failed nodes", () => {
  it.each(cases)("N=%i, failed mask %i (%s)", async (n, mask, way) => {
    const { cluster } = dev;
    resetCluster(cluster);
    const prefix = uniquePrefix("mask");
    const key = "k";
    const full = `${prefix}${key}`;
    const failed = bits(mask, n);
    const healthy = failed.filter((f) => !f).length;
    const quorum = Math.floor(n / 2) + 1;
    for (const [i, fail] of failed.entries()) {
      if (!fail) continue;
      if (way === "held") await dev.direct(i).set(full, "someone-else", "PX", 60_000);
      else cluster.controls[i]?.inject({ kind: "status", status: 503 });
    }
    const locks = createLocks({ nodes: cluster.nodes.slice(0, n), prefix, lease: 5_000 });
    let lock: Awaited<ReturnType<typeof locks.tryAcquire>> = null;
    let error: unknown;
    try {
      lock = await locks.tryAcquire(key);
    } catch (e) {
      error = e;
    }
    if (healthy >= quorum) {
      expect(error).toBeUndefined();
      expect(lock).not.toBeNull();
      const values = await readBack(dev, n, full);
      // Every healthy node that answered holds our token; a held node still holds the other one.
      expect(values.filter((v) => v === lock?.token).length).toBeGreaterThanOrEqual(quorum);
      const result = await lock?.release();
      expect(result?.status).toBe("released");
    } else {
      expect(lock).toBeNull();
      if (way === "status") expect(isQuorumError(error)).toBe(true);
      else expect(error).toBeUndefined(); // busy → null
    }
    // Nothing of ours is left behind: healthy nodes have no key; held nodes keep the other holder.
    // A failed acquire does not wait for nodes still in flight when the round was decided (a slow
    // minority must not slow it): their cleanup lands just after, hence the polling.
    await vi.waitFor(async () => {
      const after = await readBack(dev, n, full);
      after.forEach((value, i) => {
        expect(value).toBe(failed[i] && way === "held" ? "someone-else" : null);
      });
    });
    resetCluster(cluster);
  });

  it("a busy failure reports the holder's remaining time", async () => {
    const prefix = uniquePrefix("busy");
    const full = `${prefix}k`;
    for (const i of [0, 1, 2]) await dev.direct(i).set(full, "other", "PX", 4_000);
    const locks = createLocks({ nodes: dev.cluster.nodes.slice(0, 3), prefix });
    const error = await locks.acquire("k").catch((e: unknown) => e);
    expect(isLockBusyError(error)).toBe(true);
    const busy = error as { retryAfter: number; outcomes: { status: string; pttl?: number }[] };
    expect(busy.retryAfter).toBeGreaterThan(3_000);
    expect(busy.retryAfter).toBeLessThanOrEqual(4_000);
    expect(busy.outcomes.filter((o) => o.status === "held").length).toBeGreaterThanOrEqual(2);
  });

  it("reports unavailable, not busy, when failures alone rule out a majority", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const prefix = uniquePrefix("mixed");
    const full = `${prefix}k`;
    const nodes = cluster.nodes.slice(0, 3);
    const locks = createLocks({ nodes, prefix });
    // One node held by another client, two failing: no majority is possible → QuorumError (503).
    await dev.direct(0).set(full, "other", "PX", 4_000);
    cluster.controls[1]?.inject({ kind: "status", status: 503 });
    cluster.controls[2]?.inject({ kind: "status", status: 503 });
    const unavailable = await locks.acquire("k").catch((e: unknown) => e);
    expect(isQuorumError(unavailable)).toBe(true);
    // One held, one failing, one free: the holder alone does not rule out a majority, so the
    // failure decided it → still unavailable (503), naming both nodes; busy (409) only when the
    // holders alone rule it out (two of three held).
    resetCluster(cluster);
    cluster.controls[2]?.inject({ kind: "status", status: 503 });
    const mixed = (await locks.acquire("k").catch((e: unknown) => e)) as Error;
    expect(isQuorumError(mixed)).toBe(true);
    expect(mixed.message).toContain("node 0 (");
    expect(mixed.message).toMatch(/node 0 \([^)]+\): held by another caller for \d+ ms more/);
    expect(mixed.message).toMatch(/node 2 \([^)]+\): error reply: /);
    resetCluster(cluster);
    await dev.direct(1).set(full, "other", "PX", 4_000);
    const busy = await locks.acquire("k").catch((e: unknown) => e);
    expect(isLockBusyError(busy)).toBe(true);
    resetCluster(cluster);
  });
});
