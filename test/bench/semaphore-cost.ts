/**
 * Semaphore bench, section 1: one uncontended acquire + release of a permit against one of a lock,
 * at each node count, on loopback (no injected latency).
 *
 * - Node requests per acquire + release, counted at the endpoints after stragglers drained (a
 *   round resolves at a majority; the rest still arrive), after one warm-up operation, two ways:
 *   - settled (judged): each release is `release({ settled: true })`, so every node has dropped
 *     the previous token before the next acquire: an uncontended call, target 2N for both
 *     (docs/design/semaphore.md §3 "Cost in node requests": one SEM_ACQUIRE round and one release round, no trim when
 *     every node names the same slot);
 *   - back to back (reported): plain `release()`, the next acquire sent while the release's last
 *     requests are in flight. A node that has not run the release yet still holds the previous
 *     token, so a lock finds it held there (a majority grants anyway), while a permit is placed on
 *     another slot there and trimmed: that table's "acquire after a stale minority slot", 2N + a trim
 *     request per such node.
 * - Latency: the permit and the lock interleaved in one loop (stats.ts `interleave`), so drift on
 *   the shared machine hits both alike; judged as a p50 ratio. Plain `release()` (back to back),
 *   as callers release: the trim is sent after the grant, and not awaited by the acquire.
 *
 * The permit is `semaphore(locks, key, { permits: P }).acquire()` then `permit.release()`; the lock
 * is `locks.acquire(key)` then `lock.release()`, on the same `createLocks` settings.
 *
 * @module
 */
import { createLocks, type Locks } from "../../src/index";
import { type Semaphore, semaphore } from "../../src/semaphore";
import type { BenchCluster } from "./cluster";
import { countRequests } from "./cost";
import { type Contender, interleave, type Summary, summarize } from "./stats";
import { LEASE } from "./uncontended";

export interface SemCostOptions {
  readonly nodeCounts: readonly number[];
  readonly permits: number;
  /** Counted operations per contender and node count. */
  readonly times: number;
  /** Interleaved latency rounds, after `warmup` unrecorded ones. */
  readonly rounds: number;
  readonly warmup: number;
  readonly timeLimitMs: number;
}

export interface SemCostRow {
  readonly nodes: number;
  /** Node requests per acquire + release, at the endpoints, each release settled. */
  readonly lockRequests: number;
  readonly permitRequests: number;
  /** The same, back to back (plain `release()`). */
  readonly lockBackToBack: number;
  readonly permitBackToBack: number;
  /** 2N. */
  readonly expected: number;
  readonly lock: Summary;
  readonly permit: Summary;
  readonly errors: number;
  readonly lastError?: string;
}

export interface SemCostResult {
  readonly rows: readonly SemCostRow[];
  readonly rounds: number;
  readonly truncated: boolean;
}

type Op = (settled?: boolean) => Promise<void>;

interface Pair {
  readonly n: number;
  readonly lock: Op;
  readonly permit: Op;
}

function pair(cluster: BenchCluster, n: number, permits: number): Pair {
  const locks: Locks = createLocks({ nodes: cluster.nodes.slice(0, n), lease: LEASE });
  const sem: Semaphore = semaphore(locks, `bench:sem:u:${n}:sem`, { permits });
  const lockKey = `bench:sem:u:${n}:lock`;
  return {
    n,
    async lock(settled = false) {
      const { status } = await (await locks.acquire(lockKey)).release({ settled });
      if (status !== "released") throw new Error(`lock-${n}: release ${status}`);
    },
    async permit(settled = false) {
      const { status } = await (await sem.acquire()).release({ settled });
      if (status !== "released") throw new Error(`permit-${n}: release ${status}`);
    },
  };
}

/** Node requests per operation of `op`, released settled or not. */
async function perOp(cluster: BenchCluster, times: number, op: Op, settled: boolean) {
  const { requests } = await countRequests(cluster, times, async () => {
    await op(settled);
    return 0; // countRequests' budget column, unused here
  });
  return requests / times;
}

/**
 * Requests and interleaved latency of a permit and a lock at each node count.
 *
 * @example
 * const cost = await runSemCost(cluster, { nodeCounts: [1, 3, 5], permits: 3, times: 20, rounds: 150, warmup: 20, timeLimitMs: 30_000 });
 */
export async function runSemCost(
  cluster: BenchCluster,
  options: SemCostOptions,
): Promise<SemCostResult> {
  const pairs = options.nodeCounts.map((n) => pair(cluster, n, options.permits));
  const counted = new Map<number, Record<"lock" | "permit" | "lockB" | "permitB", number>>();
  for (const p of pairs) {
    const t = options.times;
    counted.set(p.n, {
      lock: await perOp(cluster, t, p.lock, true),
      permit: await perOp(cluster, t, p.permit, true),
      lockB: await perOp(cluster, t, p.lock, false),
      permitB: await perOp(cluster, t, p.permit, false),
    });
  }
  const contenders: Contender[] = pairs.flatMap((p) => [
    { id: `lock-${p.n}`, run: () => p.lock() },
    { id: `permit-${p.n}`, run: () => p.permit() },
  ]);
  const result = await interleave(contenders, options);
  const rows = pairs.map((p): SemCostRow => {
    const failed = [result.errors.get(`lock-${p.n}`), result.errors.get(`permit-${p.n}`)];
    const errors = failed.reduce((sum, f) => sum + (f?.count ?? 0), 0);
    const last = failed.find((f) => f !== undefined)?.last;
    const count = counted.get(p.n);
    return {
      nodes: p.n,
      lockRequests: count?.lock ?? Number.NaN,
      permitRequests: count?.permit ?? Number.NaN,
      lockBackToBack: count?.lockB ?? Number.NaN,
      permitBackToBack: count?.permitB ?? Number.NaN,
      expected: 2 * p.n,
      lock: summarize(result.samples.get(`lock-${p.n}`) ?? []),
      permit: summarize(result.samples.get(`permit-${p.n}`) ?? []),
      errors,
      ...(last === undefined ? {} : { lastError: last }),
    };
  });
  return { rows, rounds: result.rounds, truncated: result.truncated };
}
