import { describe, expect, it } from "vitest";
import { isLockLostError, LockLostError } from "../../src/errors";
import { createLocks, type LockEvent } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, pttlBack, readBack, resetCluster, sleep, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 3 });
const LEASE = 500;
// Short leases on a shared CI machine: give each node 200 ms (the default would be ⌊500 / 3⌋).
const requestTimeout = 200;

describe("using", () => {
  it("keeps the lock while the routine runs past several leases, then releases", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const prefix = uniquePrefix("using");
    const events: LockEvent[] = [];
    const locks = createLocks({
      nodes: cluster.nodes,
      prefix,
      lease: LEASE,
      requestTimeout,
      onEvent: (e) => events.push(e),
    });
    const full = `${prefix}k`;
    const result = await locks.using("k", async (lock) => {
      const started = performance.now();
      while (performance.now() - started < 4 * LEASE) {
        const pttls = await pttlBack(dev, 3, full);
        expect(pttls.filter((p) => p > 0).length).toBeGreaterThanOrEqual(2);
        expect(lock.signal.aborted).toBe(false);
        expect(lock.validUntil).toBeGreaterThan(Date.now());
        await sleep(50);
      }
      return "done";
    });
    expect(result).toBe("done");
    // The release resolves at a majority; the last node's delete may land a moment later.
    await eventually(async () => (await readBack(dev, 3, full)).every((v) => v === null), 3_000);
    const extensions = events.filter((e) => e.type === "extend" && e.result === "extended");
    expect(extensions.length).toBeGreaterThanOrEqual(4);
    expect(events.at(-1)).toMatchObject({ type: "release", result: "released" });
    expect(events.some((e) => e.type === "lost")).toBe(false);
  });

  it("when extension fails on a majority, lock.signal aborts before the validity ends", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const events: LockEvent[] = [];
    const locks = createLocks({
      nodes: cluster.nodes,
      prefix: uniquePrefix("using-fail"),
      lease: LEASE,
      requestTimeout,
      onEvent: (e) => events.push(e),
    });
    let abortedAt = 0;
    let validUntil = 0;
    await locks.using("k", async (lock) => {
      validUntil = lock.validUntil;
      cluster.controls[0]?.inject({ kind: "status", status: 503 });
      cluster.controls[1]?.inject({ kind: "status", status: 503 });
      await new Promise<void>((resolve) => {
        lock.signal.addEventListener("abort", () => {
          abortedAt = Date.now();
          resolve();
        });
      });
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      // the last successful grant's validity is what the abort must precede
      resetCluster(cluster);
    });
    expect(abortedAt).toBeGreaterThan(0);
    expect(abortedAt).toBeLessThan(validUntil);
    expect(events.some((e) => e.type === "extend" && e.result === "unavailable")).toBe(true);
    expect(events.some((e) => e.type === "lost" && e.reason === "validity")).toBe(true);
  });

  it("a lock taken over by someone else aborts the signal with LockLostError", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const prefix = uniquePrefix("taken");
    const locks = createLocks({ nodes: cluster.nodes, prefix, lease: LEASE });
    const reason = await locks.using("k", async (lock) => {
      await locks.forceRelease("k");
      for (const i of [0, 1, 2]) await dev.direct(i).set(`${prefix}k`, "thief", "PX", 5_000);
      await new Promise((resolve) => lock.signal.addEventListener("abort", resolve));
      return lock.signal.reason as unknown;
    });
    expect(isLockLostError(reason)).toBe(true);
    // release did not touch the thief's key
    expect(await readBack(dev, 3, `${prefix}k`)).toEqual(["thief", "thief", "thief"]);
  });

  it("the routine's own error is never masked by a failing release", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const locks = createLocks({ nodes: cluster.nodes, prefix: uniquePrefix("mask"), lease: 5_000 });
    const mine = new Error("routine failed");
    await expect(
      locks.using("k", async () => {
        for (const control of cluster.controls) control.inject({ kind: "status", status: 500 });
        throw mine;
      }),
    ).rejects.toBe(mine);
    resetCluster(cluster);
  });

  it("autoExtend on acquire; release stops it and awaits an in-flight extension", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const prefix = uniquePrefix("auto");
    const locks = createLocks({ nodes: cluster.nodes, prefix, lease: 300, requestTimeout: 120 });
    const lock = await locks.acquire("k", { autoExtend: true });
    await sleep(900);
    expect(lock.signal.aborted).toBe(false);
    expect((await pttlBack(dev, 3, `${prefix}k`)).every((p) => p > 0)).toBe(true);
    cluster.controls[0]?.inject({ kind: "latency", ms: 40 });
    cluster.controls[1]?.inject({ kind: "latency", ms: 40 });
    await sleep(130); // an extension (every ~145 ms) is likely in flight now
    expect((await lock.release()).status).toBe("released");
    resetCluster(cluster);
    await sleep(400);
    // nothing extended or re-created the key after release
    expect(await readBack(dev, 3, `${prefix}k`)).toEqual([null, null, null]);
    await expect(lock.extend()).rejects.toBeInstanceOf(LockLostError);
  });

  it("a throwing onEvent hook does not break the lock; events carry no token", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const seen: string[] = [];
    const locks = createLocks({
      nodes: cluster.nodes,
      prefix: uniquePrefix("hook"),
      onEvent: (e) => {
        seen.push(JSON.stringify(e));
        throw new Error("hook bug");
      },
    });
    const lock = await locks.acquire("k");
    await lock.extend();
    expect((await lock.release()).status).toBe("released");
    expect(seen.map((s) => JSON.parse(s).type)).toEqual(["acquire", "extend", "release"]);
    for (const event of seen) {
      expect(event).not.toContain(lock.token);
      for (const node of cluster.nodes) expect(event).not.toContain(node.token);
    }
    const first = JSON.parse(seen[0] as string) as { outcomes: Record<string, unknown>[] };
    expect(first.outcomes.map((o) => o.index)).toEqual([0, 1, 2]);
    expect(first.outcomes.filter((o) => o.status === "ok").length).toBeGreaterThanOrEqual(2);
    for (const o of first.outcomes) expect(o.host).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it("waits for a busy key by default (as redlock and redsync retry); an explicit wait: 0 does not", async () => {
    const prefix = uniquePrefix("using-wait");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix });
    const order: string[] = [];
    const job = (name: string) => async () => {
      order.push(`${name} start`);
      await sleep(100);
      order.push(`${name} end`);
    };
    await Promise.all([locks.using("k", job("a")), locks.using("k", job("b"))]);
    expect(order.filter((e) => e.endsWith("start"))).toHaveLength(2);
    expect(order[1]).toMatch(/ end$/); // one after the other, never overlapping
    // Elsewhere, one acquire attempt: the second caller fails at once.
    const strict = createLocks({ nodes: dev.cluster.nodes, prefix, wait: 0 });
    const results = await Promise.allSettled([
      strict.using("k", job("c")),
      strict.using("k", job("d")),
    ]);
    expect(
      results.map((r) => (r.status === "rejected" ? (r.reason as Error).name : "ok")).sort(),
    ).toEqual(["LockBusyError", "ok"]);
  });
});
