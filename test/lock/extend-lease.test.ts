/**
 * `lock.extend(lease)` checks its lease as `acquire()` does, before anything is sent: a lease no
 * grant could turn into `minValidity` (5 ms with the default drift and minValidity) is refused as
 * "too short", and the lock stays held as granted — no request to the nodes, its TTL read back
 * unchanged in size, its signal not aborted. Real redis-servers through the REST endpoint.
 */
import { describe, expect, it } from "vitest";
import { type ConfigurationError, createLocks, isConfigurationError } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { pttlBack, quietThenReset, requests, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 3 });

describe("extend(lease): the lease is checked as acquire() checks it", () => {
  it("a lease too short for minValidity is refused up front, the lock still held everywhere", async () => {
    const prefix = uniquePrefix("extend-lease");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix });
    const refusedByAcquire = await locks.acquire("other", { lease: 5 }).catch((e: unknown) => e);
    expect(isConfigurationError(refusedByAcquire)).toBe(true);
    const held = await locks.acquire("k", { lease: 20_000 });
    await quietThenReset(dev.cluster);
    for (const lease of [5, 10]) {
      const error = await held.extend(lease).catch((e: unknown) => e);
      expect(isConfigurationError(error), String(error)).toBe(true);
      expect((error as ConfigurationError).option).toBe("lease");
      expect((error as ConfigurationError).message).toBe(
        (refusedByAcquire as ConfigurationError).message,
      );
    }
    expect(requests(dev.cluster), "requests sent for the refused extends").toBe(0);
    expect(held.signal.aborted).toBe(false);
    for (const pttl of await pttlBack(dev, 3, `${prefix}k`)) expect(pttl).toBeGreaterThan(15_000);
    // A sound lease is still taken: the refusals left the lock usable.
    expect((await held.extend(1_000)).validUntil).toBeGreaterThan(Date.now());
    expect((await held.release()).status).toBe("released");
  });

  it("an object without a prototype as the lease: ConfigurationError naming lease, not a TypeError", async () => {
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix: uniquePrefix("extend-null") });
    const held = await locks.acquire("k", { lease: 20_000 });
    const error = await held.extend(Object.create(null) as never).catch((e: unknown) => e);
    expect(isConfigurationError(error), String(error)).toBe(true);
    expect((error as ConfigurationError).option).toBe("lease");
    expect((error as ConfigurationError).message).toContain("got object");
    expect((await held.release()).status).toBe("released");
  });
});
