/**
 * The targets of the lock bench: MET / NOT MET per target with the measured ratio, from the
 * numbers of one run.
 *
 * @module
 */
import type { BundleRow } from "./bundle";
import type { ContentionOptions, ContentionRow } from "./contention";
import type { CostRow } from "./cost";
import type { IdempotencyRow } from "./idempotency";
import type { SlowMinorityResult } from "./slow-minority";
import type { Summary } from "./stats";
import type { UncontendedResult } from "./uncontended";

/** Everything one run measured; sections that were not run are absent. */
export interface BenchResults {
  uncontended?: UncontendedResult;
  slowMinority?: SlowMinorityResult;
  contention?: { readonly options: ContentionOptions; readonly rows: readonly ContentionRow[] };
  cost?: readonly CostRow[];
  idempotency?: readonly IdempotencyRow[];
  bundle?: readonly BundleRow[];
}

export interface TargetResult {
  readonly target: string;
  /** Measured value, as text (ratio and the numbers behind it). */
  readonly measured: string;
  readonly ratio: number;
  readonly limit: string;
  readonly met: boolean;
}

/** Core entry target: 5 KB = 5 × 1024 bytes min+gzip. */
export const CORE_GZIP_LIMIT = 5 * 1024;

/** Milliseconds with 2 decimals, "—" when not finite. */
export const ms = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : "—");
/** A ratio or rate with `digits` decimals, "∞" when not finite. */
export const fx = (x: number, digits = 2): string => (Number.isFinite(x) ? x.toFixed(digits) : "∞");

function summaryOf(result: UncontendedResult, id: string): Summary | undefined {
  return result.rows.find((r) => r.id === id)?.summary;
}

function ratioTarget(
  target: string,
  numerator: Summary | undefined,
  denominator: Summary | undefined,
  names: [string, string],
  limit: number,
): TargetResult | undefined {
  if (numerator === undefined || denominator === undefined) return undefined;
  const ratio = numerator.p50 / denominator.p50;
  const p99 = numerator.p99 / denominator.p99;
  return {
    target,
    measured:
      `${fx(ratio)}× (p50 ${ms(numerator.p50)} / ${ms(denominator.p50)} ms ${names[1]}; ` +
      `p99 ratio ${fx(p99)}×, not judged)`,
    ratio,
    limit: `≤ ${limit}×`,
    met: ratio <= limit,
  };
}

function contentionTargets(rows: readonly ContentionRow[], ours: string, peer: string) {
  const a = rows.find((r) => r.id === ours);
  const b = rows.find((r) => r.id === peer);
  if (a === undefined || b === undefined) return [];
  const throughput = a.sectionsPerSecond / b.sectionsPerSecond;
  const requests = a.requestsPerSection / b.requestsPerSection;
  return [
    {
      target: `contention: ${ours} sections/s ≥ ${peer}`,
      measured: `${fx(throughput)}× (${fx(a.sectionsPerSecond, 1)} vs ${fx(b.sectionsPerSecond, 1)} /s)`,
      ratio: throughput,
      limit: "≥ 1×",
      met: throughput >= 1,
    },
    {
      target: `contention: ${ours} node requests/section ≤ ½ ${peer}`,
      measured: `${fx(requests)}× (${fx(a.requestsPerSection)} vs ${fx(b.requestsPerSection)})`,
      ratio: requests,
      limit: "≤ 0.5×",
      met: requests <= 0.5,
    },
  ];
}

/** Evaluate every target the run has data for. */
export function evaluateTargets(results: BenchResults): TargetResult[] {
  const targets: (TargetResult | undefined)[] = [];
  const u = results.uncontended;
  if (u !== undefined) {
    for (const n of [3, 5]) {
      targets.push(
        ratioTarget(
          `uncontended: edgelock-${n} ≤ 1.15× raw floor (${n} nodes), p50`,
          summaryOf(u, `edgelock-${n}`),
          summaryOf(u, `raw-${n}`),
          [`edgelock-${n}`, `raw-${n}`],
          1.15,
        ),
      );
    }
    targets.push(
      ratioTarget(
        "uncontended: edgelock-1 ≤ 1.1× @upstash/lock (same client settings), p50",
        summaryOf(u, "edgelock-1"),
        summaryOf(u, "upstash-lock"),
        ["edgelock-1", "upstash-lock"],
        1.1,
      ),
    );
  }
  const s = results.slowMinority;
  if (s !== undefined) {
    const none = s.rows.find((r) => r.condition === "none")?.summary;
    for (const condition of ["latency", "paused"] as const) {
      const label =
        condition === "latency" ? `+${s.latencyMs} ms latency` : "paused (SIGSTOP) redis-server";
      targets.push(
        ratioTarget(
          `slow minority: 1 of ${s.nodes} nodes ${label}, p50 ≤ 1.2× no-fault p50`,
          s.rows.find((r) => r.condition === condition)?.summary,
          none,
          [condition, "no fault"],
          1.2,
        ),
      );
    }
  }
  const c = results.contention;
  if (c !== undefined) {
    const many = Math.max(...c.rows.map((r) => r.nodes));
    // Shared: the callers of one isolate; clients and wake: independent clients (one per
    // invocation), polling or woken on release.
    for (const mode of ["", "-clients", "-wake"]) {
      targets.push(...contentionTargets(c.rows, `edgelock-1${mode}`, "upstash-lock"));
      targets.push(...contentionTargets(c.rows, `edgelock-${many}${mode}`, `redlock-${many}`));
    }
  }
  for (const cost of results.cost ?? []) {
    if (cost.expected === undefined) continue;
    const ratio = cost.requestsPerLockedRequest / cost.expected;
    targets.push({
      target: `cost: ${cost.id}, node requests per locked request = ${cost.fencing && cost.nodes > 1 ? "3N" : "2N"}`,
      measured: `${fx(ratio)}× (${fx(cost.requestsPerLockedRequest)} of ${cost.expected})`,
      ratio,
      limit: `= ${cost.expected}`,
      met: cost.requestsPerLockedRequest === cost.expected,
    });
  }
  for (const row of results.idempotency ?? []) {
    const n = row.nodes;
    targets.push({
      target: `idempotency: ${n} node(s), node requests per first request = 3N (the lock's 2N + N for the record)`,
      measured: `${fx(row.requestsPerFirst)} of ${3 * n}`,
      ratio: row.requestsPerFirst / (3 * n),
      limit: `= ${3 * n}`,
      met: row.requestsPerFirst === 3 * n,
    });
    targets.push({
      target: `idempotency: ${n} node(s), node requests per replay ≤ N`,
      measured: `${fx(row.requestsPerReplay)} of ${n} (replay p50 ${fx(row.replay.p50 / row.first.p50)}× a first request's; reported, not judged)`,
      ratio: row.requestsPerReplay / n,
      limit: `≤ ${n}`,
      met: row.requestsPerReplay <= n,
    });
  }
  const core = results.bundle?.find((b) => b.id === "edgelock (core)");
  if (core !== undefined) {
    const ratio = core.gzipBytes / CORE_GZIP_LIMIT;
    targets.push({
      target: "bundle: core entry min+gzip ≤ 5 KB",
      measured: `${fx(ratio)}× (${core.gzipBytes} B of ${CORE_GZIP_LIMIT} B)`,
      ratio,
      limit: "≤ 5120 B",
      met: core.gzipBytes <= CORE_GZIP_LIMIT,
    });
  }
  return targets.filter((t): t is TargetResult => t !== undefined);
}
