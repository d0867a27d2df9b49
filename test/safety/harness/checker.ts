/**
 * The safety checker: a pure function over a recorded {@link History}. It knows nothing about
 * Redis or edgelock; it checks what a user of a lock relies on:
 *
 * - **overlap**: no two holders of the same key act at once. A holder's interval is
 *   `[granted, min(validEnd, releaseStart)]`: from the moment `acquire()` resolved until its
 *   validity ran out or it called `release()`, whichever came first. Intervals recorded by different
 *   processes may be off by the clocks' error bound, so only an overlap longer than that bound
 *   counts (within one process the tolerance is 0).
 * - **lost-update**: the deliberately non-atomic read-modify-write under the lock lost nothing:
 *   the final counter equals the number of completed critical sections (plus at most the
 *   uncertain ones), and no two completed sections read the same value.
 * - **fenced-lost-update**: the same for the counter written only through the fenced script.
 * - **fence-order**: fence tokens strictly increase in grant order. The design promises this while
 *   nodes keep their data; a regression across a wipe (a node restarted empty in between) is
 *   reported separately as `excusedFenceRegressions`, never hidden.
 * - **leftover**: after the run, once the lease has been waited out, no lock key is left on any
 *   node.
 *
 * @module
 */

import type { GrantRecord, History, Wipe } from "./history";

/** One broken guarantee, with the ids of the grants involved. */
export type Violation =
  | {
      readonly kind: "overlap";
      readonly key: string;
      readonly grants: readonly [string, string];
      readonly overlapMs: number;
      readonly toleranceMs: number;
    }
  | {
      readonly kind: "lost-update" | "fenced-lost-update";
      readonly key: string;
      /** Final value on the resource. */
      readonly value: number;
      /** Completed (acknowledged) writes. */
      readonly completed: number;
      /** Writes whose outcome is unknown. */
      readonly uncertain: number;
      /** Grants whose sections read the same value (each group is one lost update). */
      readonly grants: readonly string[];
    }
  | {
      readonly kind: "fence-order";
      readonly key: string;
      /** Earlier grant (highest fence so far), later grant (not higher). */
      readonly grants: readonly [string, string];
      readonly fences: readonly [number, number];
    }
  | {
      readonly kind: "leftover";
      readonly key: string;
      readonly node: number;
      readonly pttl: number;
      readonly grants: readonly string[];
    };

/** A fence that did not increase, explained by a node that lost its data in between. */
export interface ExcusedFenceRegression {
  readonly key: string;
  readonly grants: readonly [string, string];
  readonly fences: readonly [number, number];
  readonly wipe: Wipe;
}

/** What the checker found, plus counts for the report. */
export interface CheckResult {
  readonly violations: readonly Violation[];
  readonly excusedFenceRegressions: readonly ExcusedFenceRegression[];
  readonly stats: {
    readonly grants: number;
    readonly sectionsCompleted: number;
    readonly sectionsAbandoned: number;
    readonly sectionsUncertain: number;
    /** Completed sections whose write was acknowledged after the holder's validity ended. */
    readonly sectionsOverran: number;
    readonly fencedAccepted: number;
    readonly fencedRejected: number;
    readonly released: number;
    readonly expiredOnRelease: number;
    readonly unknownOnRelease: number;
    readonly neverReleased: number;
    readonly extended: number;
    readonly lostSignals: number;
  };
}

/** End of a holder's interval: validity end, or release call if earlier. */
export const intervalEnd = (g: Pick<GrantRecord, "validEnd" | "releaseStart">): number =>
  Math.min(g.validEnd, g.releaseStart ?? Number.POSITIVE_INFINITY);

function tolerance(history: History, a: GrantRecord, b: GrantRecord): number {
  if (a.source === b.source) return 0;
  return (history.clockError[a.source] ?? 0) + (history.clockError[b.source] ?? 0);
}

function byKey(grants: readonly GrantRecord[]): Map<string, GrantRecord[]> {
  const map = new Map<string, GrantRecord[]>();
  for (const g of grants) {
    const list = map.get(g.key) ?? [];
    list.push(g);
    map.set(g.key, list);
  }
  for (const list of map.values()) list.sort((a, b) => a.granted - b.granted);
  return map;
}

function overlaps(history: History, key: string, grants: readonly GrantRecord[]): Violation[] {
  const found: Violation[] = [];
  const maxTolerance = 2 * Math.max(0, ...Object.values(history.clockError));
  let active: GrantRecord[] = [];
  for (const g of grants) {
    active = active.filter((a) => intervalEnd(a) + maxTolerance > g.granted);
    for (const a of active) {
      const overlapMs = Math.min(intervalEnd(a), intervalEnd(g)) - g.granted;
      const toleranceMs = tolerance(history, a, g);
      if (overlapMs > toleranceMs) {
        found.push({ kind: "overlap", key, grants: [a.id, g.id], overlapMs, toleranceMs });
      }
    }
    if (intervalEnd(g) > g.granted) active.push(g);
  }
  return found;
}

function duplicateReads(entries: readonly { id: string; read: number }[]): string[] {
  const byRead = new Map<number, string[]>();
  for (const { id, read } of entries) byRead.set(read, [...(byRead.get(read) ?? []), id]);
  return [...byRead.values()].filter((ids) => ids.length > 1).flat();
}

function lostUpdates(history: History, key: string, grants: readonly GrantRecord[]): Violation[] {
  const found: Violation[] = [];
  const state = history.resource[key] ?? { counter: 0, fencedCounter: 0, lastFence: 0 };
  const done = grants.flatMap((g) =>
    g.counter?.state === "done" ? [{ id: g.id, read: g.counter.read }] : [],
  );
  const uncertain = grants.filter((g) => g.counter?.state === "uncertain").length;
  const dup = duplicateReads(done);
  if (state.counter < done.length || state.counter > done.length + uncertain || dup.length > 0) {
    found.push({
      kind: "lost-update",
      key,
      value: state.counter,
      completed: done.length,
      uncertain,
      grants: dup,
    });
  }
  const accepted = grants.flatMap((g) =>
    g.fenced?.state === "done" && g.fenced.accepted ? [{ id: g.id, read: g.fenced.read }] : [],
  );
  const fencedUncertain = grants.filter((g) => g.fenced?.state === "uncertain").length;
  const fencedDup = duplicateReads(accepted);
  if (
    state.fencedCounter < accepted.length ||
    state.fencedCounter > accepted.length + fencedUncertain ||
    fencedDup.length > 0
  ) {
    found.push({
      kind: "fenced-lost-update",
      key,
      value: state.fencedCounter,
      completed: accepted.length,
      uncertain: fencedUncertain,
      grants: fencedDup,
    });
  }
  return found;
}

function fenceOrder(
  history: History,
  key: string,
  grants: readonly GrantRecord[],
): { violations: Violation[]; excused: ExcusedFenceRegression[] } {
  const violations: Violation[] = [];
  const excused: ExcusedFenceRegression[] = [];
  const fenced = grants.filter((g) => g.fence !== undefined);
  const wipes = [...history.wipes].sort((a, b) => a.at - b.at);
  let wipe: Wipe | undefined;
  let nextWipe = 0;
  // Highest fence among earlier grants that started after the latest wipe (guaranteed lower),
  // and among all earlier grants (a regression below it is excused by the wipe).
  let segmentMax: GrantRecord | undefined;
  let overallMax: GrantRecord | undefined;
  fenced.forEach((g, i) => {
    let moved = false;
    while (nextWipe < wipes.length && (wipes[nextWipe] as Wipe).at < g.granted) {
      wipe = wipes[nextWipe++];
      moved = true;
    }
    if (moved && wipe !== undefined) {
      // A grant whose acquire began before the wipe may have raised only the wiped node's old
      // counter: it no longer bounds later fences.
      const from = wipe.at;
      segmentMax = fenced
        .slice(0, i)
        .filter((p) => p.requested >= from)
        .reduce<GrantRecord | undefined>(
          (max, p) => (max === undefined || (p.fence ?? 0) > (max.fence ?? 0) ? p : max),
          undefined,
        );
    }
    const fence = g.fence as number;
    const ambiguous = (p: GrantRecord) =>
      p.source !== g.source && g.granted - p.granted <= tolerance(history, p, g);
    if (
      segmentMax !== undefined &&
      fence <= (segmentMax.fence as number) &&
      !ambiguous(segmentMax)
    ) {
      violations.push({
        kind: "fence-order",
        key,
        grants: [segmentMax.id, g.id],
        fences: [segmentMax.fence as number, fence],
      });
    } else if (
      overallMax !== undefined &&
      fence <= (overallMax.fence as number) &&
      wipe !== undefined &&
      !ambiguous(overallMax)
    ) {
      excused.push({
        key,
        grants: [overallMax.id, g.id],
        fences: [overallMax.fence as number, fence],
        wipe,
      });
    }
    const startedAfterWipe = wipe === undefined || g.requested >= wipe.at;
    if (startedAfterWipe && (segmentMax === undefined || fence > (segmentMax.fence as number))) {
      segmentMax = g;
    }
    if (overallMax === undefined || fence > (overallMax.fence as number)) overallMax = g;
  });
  return { violations, excused };
}

/**
 * Check a recorded history. Pure: the same history always gives the same result.
 *
 * @example
 * const { violations } = checkHistory(history);
 * if (violations.length > 0) console.error(formatViolations(history, violations));
 */
export function checkHistory(history: History): CheckResult {
  const violations: Violation[] = [];
  const excused: ExcusedFenceRegression[] = [];
  const keys = byKey(history.grants);
  for (const key of Object.keys(history.resource)) if (!keys.has(key)) keys.set(key, []);
  for (const [key, grants] of keys) {
    violations.push(...overlaps(history, key, grants));
    violations.push(...lostUpdates(history, key, grants));
    const fences = fenceOrder(history, key, grants);
    violations.push(...fences.violations);
    excused.push(...fences.excused);
  }
  for (const left of history.leftovers) {
    const holders = (keys.get(left.key) ?? []).slice(-3).map((g) => g.id);
    violations.push({ kind: "leftover", ...left, grants: holders });
  }
  const g = history.grants;
  const count = (p: (r: GrantRecord) => boolean) => g.filter(p).length;
  return {
    violations,
    excusedFenceRegressions: excused,
    stats: {
      grants: g.length,
      sectionsCompleted: count((r) => r.counter?.state === "done"),
      sectionsAbandoned: count((r) => r.counter?.state === "abandoned"),
      sectionsUncertain: count((r) => r.counter?.state === "uncertain"),
      sectionsOverran: count((r) => r.counter?.state === "done" && r.counter.ackAt > r.validEnd),
      fencedAccepted: count((r) => r.fenced?.state === "done" && r.fenced.accepted),
      fencedRejected: count((r) => r.fenced?.state === "done" && !r.fenced.accepted),
      released: count((r) => r.releaseStatus === "released"),
      expiredOnRelease: count((r) => r.releaseStatus === "expired"),
      unknownOnRelease: count((r) => r.releaseStatus === "unknown"),
      neverReleased: count((r) => r.releaseStart === undefined),
      extended: g.reduce((sum, r) => sum + r.extended, 0),
      lostSignals: count((r) => r.lostAt !== undefined),
    },
  };
}

/** The grants a violation names, plus the other grants of its key that overlap them in time. */
export function offendingGrants(history: History, violation: Violation): GrantRecord[] {
  const ids = new Set(violation.grants);
  const named = history.grants.filter((g) => ids.has(g.id));
  if (named.length === 0) return [];
  const from = Math.min(...named.map((g) => g.requested));
  const to = Math.max(...named.map((g) => intervalEnd(g)));
  return history.grants
    .filter(
      (g) =>
        g.key === violation.key && (ids.has(g.id) || (g.granted <= to && intervalEnd(g) >= from)),
    )
    .sort((a, b) => a.granted - b.granted)
    .slice(0, 20);
}
