import { describe, expect, it } from "vitest";
import {
  BudgetExhaustedError,
  isBudgetExhaustedError,
  isLockBusyError,
  LockLostError,
} from "../../src/errors";
import { budget, createLocks } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import {
  eventually,
  landed,
  pttlBack,
  quietThenReset,
  readBack,
  requests,
  resetCluster,
  uniquePrefix,
} from "./helpers";

const dev = useDevCluster({ nodes: 3 });
/** Whole-ms rounding of the budget, the TTL floor and Redis' PTTL. */
const ROUNDING = 3;

describe("execution budget", () => {
  it.each([
    ["budget shorter than the lease", 3_000, 500, 10_000, 3_500],
    ["lease shorter than the budget", 10_000, 1_000, 2_000, 2_000],
  ])(
    "%s: PTTL read back = min(lease, remaining + margin)",
    async (_, within, margin, lease, expected) => {
      const prefix = uniquePrefix("ttl");
      const locks = createLocks({ nodes: dev.cluster.nodes, prefix, lease });
      await quietThenReset(dev.cluster);
      const started = performance.now();
      const b = budget.within(within, { margin });
      const lock = await locks.acquire("k", { budget: b });
      // Decided at a majority: let the third node's grant land before reading it.
      await landed(dev.cluster, 3);
      const pttls = await pttlBack(dev, 3, `${prefix}k`);
      // Everything from sizing the TTL to these reads may have eaten into it.
      const elapsed = performance.now() - started;
      for (const pttl of pttls) {
        expect(pttl).toBeLessThanOrEqual(expected);
        expect(pttl).toBeGreaterThanOrEqual(expected - elapsed - ROUNDING);
      }
      await lock.release();
    },
  );

  it("extensions are sized the same way; a Lambda context works", async () => {
    const prefix = uniquePrefix("lambda");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, lease: 60_000 });
    const b = budget.lambda({ getRemainingTimeInMillis: () => 2_000 });
    const lock = await locks.acquire("k", { budget: b });
    await new Promise((r) => setTimeout(r, 300));
    await quietThenReset(dev.cluster);
    const extending = performance.now();
    const expected = b.remaining() + b.margin;
    await lock.extend();
    // Decided at a majority: the third node may still hold the acquire's (longer) TTL until its
    // extension lands.
    await landed(dev.cluster, 3);
    const pttls = await pttlBack(dev, 3, `${prefix}k`);
    const elapsed = performance.now() - extending;
    for (const pttl of pttls) {
      expect(pttl).toBeLessThanOrEqual(expected);
      expect(pttl).toBeGreaterThanOrEqual(expected - elapsed - ROUNDING);
    }
    await lock.release();
  });

  it.each([
    ["no time left", () => budget.within(0)],
    ["time left is reserved for the work", () => budget.within(2_000, { reserve: 2_500 })],
    ["deadline in the past", () => budget.until(Date.now() - 1)],
    ["fewer than 2N subrequests", () => budget.within(5_000, { subrequests: 5 })],
  ])("%s → BudgetExhaustedError with zero endpoint requests", async (_, make) => {
    const { cluster } = dev;
    const locks = createLocks({ nodes: cluster.nodes, prefix: uniquePrefix("exhausted") });
    resetCluster(cluster);
    const b = make();
    await expect(locks.acquire("k", { budget: b })).rejects.toBeInstanceOf(BudgetExhaustedError);
    await expect(locks.tryAcquire("k", { budget: b })).rejects.toBeInstanceOf(BudgetExhaustedError);
    expect(requests(cluster)).toBe(0);
    expect(b.spent).toBe(0);
  });

  it("fencing on N > 1 needs 3N subrequests", async () => {
    const { cluster } = dev;
    const locks = createLocks({ nodes: cluster.nodes, prefix: uniquePrefix("f"), fencing: true });
    resetCluster(cluster);
    const short = budget.within(5_000, { subrequests: 8 });
    await expect(locks.acquire("k", { budget: short })).rejects.toBeInstanceOf(
      BudgetExhaustedError,
    );
    expect(requests(cluster)).toBe(0);
    const enough = budget.within(5_000, { subrequests: 9 });
    const lock = await locks.acquire("k", { budget: enough });
    await lock.release();
    expect(enough.spent).toBe(9);
    // The release resolves at a majority: the third node's request may land after it.
    expect(await landed(cluster, 9)).toBe(9);
  });

  it("the subrequest allowance is respected under contention", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("allowance");
    const locks = createLocks({ nodes: cluster.nodes, prefix, retryDelayMax: 100 });
    // Another client holds it (a holder of the same `locks` would make the waiter wait in line
    // without asking the nodes at all).
    const other = createLocks({ nodes: cluster.nodes, prefix });
    const holder = await other.acquire("k");
    // Decided at a majority: let the third node's grant land before counting from zero.
    await eventually(async () =>
      (await readBack(dev, 3, `${prefix}k`)).every((v) => v === holder.token),
    );
    resetCluster(cluster);
    const b = budget.within(10_000, { subrequests: 20 });
    const error = await locks.acquire("k", { budget: b, wait: 10_000 }).catch((e: unknown) => e);
    expect(isLockBusyError(error)).toBe(true);
    expect(isBudgetExhaustedError((error as Error).cause)).toBe(true);
    // Leaving the wait room on giving up goes out in the background: let it land.
    await eventually(() => requests(cluster) === b.spent, 2_000);
    const used = requests(cluster);
    console.log(`waiter used ${used} of 20 subrequests; budget charged ${b.spent}`);
    expect(used).toBe(b.spent);
    // Each look kept N for a release; the call, queued on every node, gave up without a grant and
    // spent those N on its DISCARD instead (its tombstone everywhere: L3). Never past the allowance.
    expect(used).toBeLessThanOrEqual(20);
    await holder.release();
  });

  it("lock.signal aborts before the budget's deadline", async () => {
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix: uniquePrefix("deadline") });
    const b = budget.within(600, { margin: 300 });
    const lock = await locks.acquire("k", { budget: b, autoExtend: true });
    const abortedAt = await new Promise<number>((resolve) =>
      lock.signal.addEventListener("abort", () => resolve(Date.now())),
    );
    expect(abortedAt).toBeLessThan(b.deadlineEpoch);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect((await lock.release()).status).toBe("released");
  });
});
