/**
 * Targets and markdown of the semaphore bench (test/bench/semaphore.ts says why each target is
 * what it is).
 *
 * @module
 */
import type { SemContentionResult, SemContentionRow } from "./semaphore-contention";
import type { SemCostResult } from "./semaphore-cost";
import { fx, ms, type TargetResult } from "./targets";

/** Everything one run measured; sections not run are absent. */
export interface SemBenchResults {
  cost?: SemCostResult;
  contention?: SemContentionResult;
}

/** Permit p50 over lock p50, uncontended. */
export const LATENCY_LIMIT = 1.15;
/** Contended sections/s against the floor, or against the lock's fraction of its own floor. */
export const FLOOR_LIMIT = 0.8;
export const VERSUS_LOCK_LIMIT = 0.95;
/** Node requests per section against the lock's through the nodes' queue (clients), same nodes. */
export const REQUESTS_LIMIT = 1.25;
/** Shared-`Locks` sections/s against the floor below which design open question 5 reopens. */
export const SHARED_FLOOR_LIMIT = 0.7;
/** p99 wait against 1.5 × clients ÷ sections/s (the lock bench's fair-queue bound). */
export const FAIR_TURNS = 1.5;

function costTargets(cost: SemCostResult): TargetResult[] {
  const out: TargetResult[] = [];
  for (const r of cost.rows) {
    for (const [what, got] of [
      ["permit", r.permitRequests],
      ["lock", r.lockRequests],
    ] as const) {
      out.push({
        target: `uncontended: ${what}, ${r.nodes} node(s), node requests per acquire + release = 2N`,
        measured: `${fx(got)} of ${r.expected}`,
        ratio: got / r.expected,
        limit: `= ${r.expected}`,
        met: got === r.expected,
      });
    }
    const ratio = r.permit.p50 / r.lock.p50;
    out.push({
      target: `uncontended: permit p50 ≤ ${LATENCY_LIMIT}× lock p50, ${r.nodes} node(s)`,
      measured: `${fx(ratio)}× (${ms(r.permit.p50)} / ${ms(r.lock.p50)} ms; p99 ${fx(r.permit.p99 / r.lock.p99)}×, not judged)`,
      ratio,
      limit: `≤ ${LATENCY_LIMIT}×`,
      met: ratio <= LATENCY_LIMIT,
    });
  }
  return out;
}

function contentionTargets(c: SemContentionResult): TargetResult[] {
  const out: TargetResult[] = [];
  const rows = c.rows;
  const most = rows.reduce(
    (m, r) => Math.max(m, r.maxInside - r.permits),
    Number.NEGATIVE_INFINITY,
  );
  const violations = rows.reduce((sum, r) => sum + r.violations, 0);
  out.push({
    target: "contention: never more than P in the section at once (the lock: 1), every contender",
    measured: `${violations} violation(s); max in section ${rows.map((r) => `${r.id} ${r.maxInside}/${r.permits}`).join(", ")}`,
    ratio: violations,
    limit: "0 violations",
    met: violations === 0 && most <= 0,
  });
  for (const sem of rows.filter((r) => r.kind === "semaphore")) {
    const lock = rows.find(
      (r) => r.kind === "lock" && r.nodes === sem.nodes && r.mode === sem.mode,
    );
    const ofFloor = sem.sectionsPerSecond / sem.floor;
    const lockOfFloor = lock === undefined ? Number.NaN : lock.sectionsPerSecond / lock.floor;
    const versusLock = ofFloor / lockOfFloor;
    const byFloor = ofFloor >= FLOOR_LIMIT;
    const byLock = versusLock >= VERSUS_LOCK_LIMIT;
    out.push({
      target: `contention: ${sem.id} sections/s ≥ ${FLOOR_LIMIT}× the floor P / (h + round trip), or of-floor ≥ ${VERSUS_LOCK_LIMIT}× the lock's`,
      measured:
        `${fx(ofFloor)}× the floor (${fx(sem.sectionsPerSecond, 1)} of ${fx(sem.floor, 1)} /s); ` +
        `lock ${fx(lockOfFloor)}× its floor, so ${fx(versusLock)}× the lock's; ` +
        `${byFloor ? "met by the floor" : byLock ? "met against the lock" : "neither"}`,
      ratio: ofFloor,
      limit: `≥ ${FLOOR_LIMIT}× floor or ≥ ${VERSUS_LOCK_LIMIT}× lock's`,
      met: byFloor || byLock,
    });
    // Every permit waiter goes through the nodes' room (docs/design/semaphore.md §3 "no local line"), so its
    // reference is the lock's clients mode, whatever the semaphore's own mode.
    const queued = rows.find((r) => r.id === `lock-${sem.nodes}-clients`);
    if (queued !== undefined) {
      const ratio = sem.requestsPerSection / queued.requestsPerSection;
      const local =
        lock?.mode === "shared"
          ? `; ${lock.id} ${fx(lock.requestsPerSection)} with its local line, not judged`
          : "";
      out.push({
        target: `contention: ${sem.id} node requests/section ≤ ${REQUESTS_LIMIT}× ${queued.id}'s`,
        measured: `${fx(ratio)}× (${fx(sem.requestsPerSection)} vs ${fx(queued.requestsPerSection)}, ${fx(sem.requestsPerSection / sem.nodes)}N${local})`,
        ratio,
        limit: `≤ ${REQUESTS_LIMIT}×`,
        met: ratio <= REQUESTS_LIMIT,
      });
    }
    if (sem.mode === "shared") {
      out.push({
        target: `contention: ${sem.id} sections/s ≥ ${SHARED_FLOOR_LIMIT}× the floor (docs/design/semaphore.md §8, open question 5: below it, weigh an in-instance hand-over)`,
        measured: `${fx(ofFloor)}×`,
        ratio: ofFloor,
        limit: `≥ ${SHARED_FLOOR_LIMIT}×`,
        met: ofFloor >= SHARED_FLOOR_LIMIT,
      });
    }
    const bound = (FAIR_TURNS * 1_000 * c.options.clients) / sem.sectionsPerSecond;
    out.push({
      target: `contention: ${sem.id} p99 wait ≤ ${FAIR_TURNS} × (clients ÷ sections/s)`,
      measured: `${fx(sem.wait.p99 / bound)}× (p99 ${fx(sem.wait.p99, 0)} ms; bound ${fx(bound, 0)} ms)`,
      ratio: sem.wait.p99 / bound,
      limit: "≤ 1×",
      met: sem.wait.p99 <= bound,
    });
  }
  return out;
}

/** Every target the run has data for. */
export function evaluateSemTargets(results: SemBenchResults): TargetResult[] {
  return [
    ...(results.cost === undefined ? [] : costTargets(results.cost)),
    ...(results.contention === undefined ? [] : contentionTargets(results.contention)),
  ];
}

const row = (cells: readonly (string | number)[]) => `| ${cells.join(" | ")} |`;
const table = (header: readonly string[], rows: readonly (readonly (string | number)[])[]) =>
  [row(header), row(header.map(() => "---")), ...rows.map(row)].join("\n");

function contentionRow(r: SemContentionRow, durationMs: number): (string | number)[] {
  return [
    r.id,
    r.nodes,
    r.permits,
    fx(r.sectionsPerSecond, 1),
    fx(r.floor, 1),
    `${fx(r.sectionsPerSecond / r.floor)}×`,
    fx(r.requestsPerSection),
    fx(r.nodeRequests / (durationMs / 1_000), 0),
    ms(r.wait.p50),
    ms(r.wait.p99),
    `${r.maxInside}${r.violations > 0 ? ` **VIOLATION ×${r.violations}**` : ""}`,
    fx(r.holdMeanMs, 1),
    `${fx(100 * r.benchCpu, 0)} %`,
    r.errors === 0 ? 0 : `${r.errors} (last: ${r.lastError})`,
  ];
}

/** The markdown report of one run. */
export function renderSemMarkdown(
  results: SemBenchResults,
  targets: readonly TargetResult[],
  header: string,
): string {
  const out = [header];
  const u = results.cost;
  if (u !== undefined) {
    out.push(
      `\n### 1. Uncontended acquire + release, permit vs lock (loopback; ${u.rounds} interleaved rounds${u.truncated ? ", cut by the time limit" : ""})\n`,
      table(
        [
          "nodes",
          "lock requests",
          "permit requests",
          "2N",
          "back to back: lock / permit",
          "lock p50 / p99 ms",
          "permit p50 / p99 ms",
          "permit / lock p50",
          "errors",
        ],
        u.rows.map((r) => [
          r.nodes,
          fx(r.lockRequests),
          fx(r.permitRequests),
          r.expected,
          `${fx(r.lockBackToBack)} / ${fx(r.permitBackToBack)}`,
          `${ms(r.lock.p50)} / ${ms(r.lock.p99)}`,
          `${ms(r.permit.p50)} / ${ms(r.permit.p99)}`,
          `${fx(r.permit.p50 / r.lock.p50)}×`,
          r.errors === 0 ? 0 : `${r.errors} (last: ${r.lastError})`,
        ]),
      ),
      "\nRequests: each release settled (every node answered) before the next acquire, judged; " +
        "back to back: plain `release()`, so a node still running the previous release holds the " +
        "previous token, and a permit placed on another slot there is trimmed (+1 request; " +
        'docs/design/semaphore.md §3 "Cost in node requests": a stale minority slot). Latency: back to back, interleaved.',
    );
  }
  const c = results.contention;
  if (c !== undefined) {
    const { clients, holdMs, durationMs, latency, permits } = c.options;
    const trips = c.roundTrips.map((t) => `${t.nodes} node(s) ${fx(t.summary.p50, 1)} ms`);
    out.push(
      `\n### 2. Contention at WAN latency (every node request ${latency[0]}–${latency[1]} ms; ${clients} loops, ${holdMs} ms hold, ${durationMs / 1000} s each; P = ${permits}; load ${c.load[0]} → ${c.load[1]})\n`,
      table(
        [
          "contender",
          "nodes",
          "permits",
          "sections/s",
          "floor /s",
          "of floor",
          "node requests/section",
          "node requests/s",
          "p50 wait ms",
          "p99 wait ms",
          "max in section",
          "hold mean ms",
          "bench CPU",
          "errors",
        ],
        c.rows.map((r) => contentionRow(r, durationMs)),
      ),
      `\nRound trip (p50 of an uncontended lock acquire at this latency): ${trips.join(", ")}. ` +
        "Floor: permits ÷ (hold + round trip). sem-N-clients / lock-N-clients: one `createLocks` " +
        "per loop (independent invocations); -shared: one `Locks` for all loops. All loops run in " +
        "this one process (bench CPU: its CPU time ÷ the window, 100 % = one core), which " +
        "independent clients would not share; hold mean is the hold as its timers delivered it. " +
        "Node requests/s: what the endpoints served, all nodes together, on this machine's cores.",
    );
  }
  if (targets.length > 0) {
    out.push(
      "\n### Targets\n",
      table(
        ["target", "measured", "limit", "result"],
        targets.map((t) => [t.target, t.measured, t.limit, t.met ? "MET" : "NOT MET"]),
      ),
    );
  }
  return `${out.join("\n")}\n`;
}
