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
import type { WanResult } from "./wan";

/** Everything one run measured; sections that were not run are absent. */
export interface BenchResults {
  uncontended?: UncontendedResult;
  slowMinority?: SlowMinorityResult;
  contention?: { readonly options: ContentionOptions; readonly rows: readonly ContentionRow[] };
  cost?: readonly CostRow[];
  idempotency?: readonly IdempotencyRow[];
  wan?: WanResult;
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

/** `import { createLocks }` (tree-shaken) guard: 15 KB = 15 × 1024 bytes min+gzip. */
export const CREATE_LOCKS_GZIP_LIMIT = 15 * 1024;

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

/** What one contender must reach against another (undefined: not judged). */
interface Versus {
  readonly sections?: number;
  readonly requests?: number;
  readonly p99?: number;
}

/** Targets of `ours` against `peer` in `rows` (section `where`: loopback or WAN). */
function versus(
  rows: readonly ContentionRow[],
  where: string,
  ours: string,
  peer: string,
  limits: Versus,
): TargetResult[] {
  const a = rows.find((r) => r.id === ours);
  const b = rows.find((r) => r.id === peer);
  if (a === undefined || b === undefined) return [];
  const out: TargetResult[] = [];
  if (limits.sections !== undefined) {
    const ratio = a.sectionsPerSecond / b.sectionsPerSecond;
    out.push({
      target: `${where}: ${ours} sections/s ≥ ${limits.sections}× ${peer}`,
      measured: `${fx(ratio)}× (${fx(a.sectionsPerSecond, 1)} vs ${fx(b.sectionsPerSecond, 1)} /s)`,
      ratio,
      limit: `≥ ${limits.sections}×`,
      met: ratio >= limits.sections,
    });
  }
  if (limits.requests !== undefined) {
    const ratio = a.requestsPerSection / b.requestsPerSection;
    out.push({
      target: `${where}: ${ours} node requests/section ≤ ${limits.requests}× ${peer}`,
      measured: `${fx(ratio)}× (${fx(a.requestsPerSection)} vs ${fx(b.requestsPerSection)})`,
      ratio,
      limit: `≤ ${limits.requests}×`,
      met: ratio <= limits.requests,
    });
  }
  if (limits.p99 !== undefined) {
    const ratio = a.wait.p99 / b.wait.p99;
    out.push({
      target: `${where}: ${ours} p99 wait ≤ ${limits.p99}× ${peer}`,
      measured: `${fx(ratio)}× (${fx(a.wait.p99, 0)} vs ${fx(b.wait.p99, 0)} ms)`,
      ratio,
      limit: `≤ ${limits.p99}×`,
      met: ratio <= limits.p99,
    });
  }
  return out;
}

/**
 * Independent clients (one `Locks` per worker) in the nodes' queues at N nodes, against the floor
 * (or, where this machine cannot reach it, the shared mode of the same run).
 */
function floorTarget(w: WanResult, n: number): TargetResult | undefined {
  const clients = w.rows.find((r) => r.id === `edgelock-${n}-clients`);
  const shared = w.rows.find((r) => r.id === `edgelock-${n}`);
  if (clients === undefined || shared === undefined) return undefined;
  const floor = w.floorSectionsPerSecond;
  const ofFloor = clients.sectionsPerSecond / floor;
  const ofShared = clients.sectionsPerSecond / shared.sectionsPerSecond;
  return {
    target: `WAN: edgelock-${n}-clients sections/s ≥ 0.8× the floor, or ≥ 0.95× edgelock-${n} (shared) where the machine cannot reach the floor`,
    measured:
      `${fx(ofFloor)}× the floor (${fx(clients.sectionsPerSecond, 1)} of ${fx(floor, 1)} /s); ` +
      `${fx(ofShared)}× shared (${fx(shared.sectionsPerSecond, 1)} /s)`,
    ratio: ofFloor,
    limit: "≥ 0.8× floor or ≥ 0.95× shared",
    met: ofFloor >= 0.8 || ofShared >= 0.95,
  };
}

/** A fair queue: p99 wait within 1.5 turns of the whole line (clients ÷ sections/s). */
function fairTarget(w: WanResult, id: string): TargetResult | undefined {
  const row = w.rows.find((r) => r.id === id);
  if (row === undefined) return undefined;
  const turn = (1_000 * w.options.workers) / row.sectionsPerSecond;
  const ratio = row.wait.p99 / (1.5 * turn);
  return {
    target: `WAN: ${id} p99 wait ≤ 1.5 × (clients ÷ sections/s)`,
    measured: `${fx(ratio)}× (p99 ${fx(row.wait.p99, 0)} ms; 1.5 × ${w.options.workers} ÷ ${fx(row.sectionsPerSecond, 1)} /s = ${fx(1.5 * turn, 0)} ms)`,
    ratio,
    limit: "≤ 1×",
    met: ratio <= 1,
  };
}

function wanTargets(w: WanResult): TargetResult[] {
  const out: (TargetResult | undefined)[] = [];
  const where = "WAN";
  out.push(...versus(w.rows, where, "edgelock-1", "upstash-lock", { sections: 1, requests: 0.5 }));
  out.push(
    ...versus(w.rows, where, "edgelock-1-clients", "upstash-lock", { sections: 0.9, requests: 1 }),
  );
  const counts = [...new Set(w.rows.filter((r) => r.library === "edgelock").map((r) => r.nodes))];
  for (const n of counts) {
    const clients = `edgelock-${n}-clients`;
    const polling = `edgelock-${n}-polling`;
    if (n > 1) out.push(floorTarget(w, n));
    out.push(fairTarget(w, clients));
    // One node: no worse than polling in throughput as well.
    out.push(
      ...versus(w.rows, where, clients, polling, {
        p99: 0.3,
        requests: 1,
        ...(n === 1 ? { sections: 1 } : {}),
      }),
    );
    out.push(
      ...versus(w.rows, where, `edgelock-${n}-lambda`, polling, { sections: 1, requests: 1 }),
    );
  }
  for (const head of w.head) {
    const worst = Math.max(...head.idleMs);
    const ratio = worst / head.boundMs;
    out.push({
      target: `WAN: a ${head.kind} head at ${head.nodes} node(s) idles the key ≤ handMs + retryDelayMax`,
      measured: `${fx(ratio)}× (worst ${fx(worst, 0)} ms of ${head.idleMs.map((x) => fx(x, 0)).join(", ")}; bound ${head.handMs} + ${head.retryDelayMax} ms)`,
      ratio,
      limit: `≤ ${head.boundMs} ms`,
      met: worst <= head.boundMs,
    });
  }
  return out.filter((t): t is TargetResult => t !== undefined);
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
    // Shared: the callers of one isolate; clients: independent clients (one per invocation).
    const where = "contention (loopback)";
    targets.push(
      ...versus(c.rows, where, "edgelock-1", "upstash-lock", { sections: 1, requests: 0.5 }),
    );
    targets.push(
      ...versus(c.rows, where, `edgelock-${many}`, `redlock-${many}`, { requests: 0.5 }),
    );
    targets.push(
      ...versus(c.rows, where, "edgelock-1-clients", "upstash-lock", {
        sections: 0.9,
        requests: 1,
      }),
    );
  }
  const w = results.wan;
  if (w !== undefined) targets.push(...wanTargets(w));
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
  // No absolute size target for the core entry (docs/PERFORMANCE.md "Targets"): a guard against
  // growth instead.
  const app = results.bundle?.find((b) => b.id === "import { createLocks } from edgelock");
  if (app !== undefined) {
    const ratio = app.gzipBytes / CREATE_LOCKS_GZIP_LIMIT;
    targets.push({
      target: "bundle: import { createLocks } min+gzip ≤ 15 KB",
      measured: `${fx(ratio)}× (${app.gzipBytes} B of ${CREATE_LOCKS_GZIP_LIMIT} B)`,
      ratio,
      limit: `≤ ${CREATE_LOCKS_GZIP_LIMIT} B`,
      met: app.gzipBytes <= CREATE_LOCKS_GZIP_LIMIT,
    });
  }
  return targets.filter((t): t is TargetResult => t !== undefined);
}
