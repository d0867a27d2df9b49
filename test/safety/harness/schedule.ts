/**
 * Seeded fault schedules for the safety suite. A schedule is a list of timed events against single
 * nodes of the lock cluster; it is a pure function of its options, so `--seed N` replays the same
 * faults at the same offsets. At most `maxDown` nodes (a minority) are paused or restarting at any
 * moment, so a majority can keep granting; the request-level faults (latency, errors, resets) may
 * hit any node at any time.
 *
 * @module
 */

import { createRng, derive } from "./random";

/**
 * Which restarts a run may contain:
 * - `keep-data`: restarts keep their data (AOF, fsync always), at once or after more than a lease;
 * - `delayed-empty`: restarts lose their data but stay away longer than the lease;
 * - `mixed` (default): both;
 * - `unsafe`: `mixed` plus restarts that lose their data and come back AT ONCE, the case the
 *   Redis documentation warns about; violations may then be found, and that is the point.
 */
export type Profile = "keep-data" | "delayed-empty" | "mixed" | "unsafe";

/** Every kind of fault the injector knows. */
export type FaultKind =
  | "latency"
  | "status-5xx"
  | "non-json"
  | "reset-before"
  | "reset-after"
  | "hang"
  | "noscript"
  | "pause"
  | "restart-keep"
  | "restart-keep-delayed"
  | "restart-empty-delayed"
  | "restart-empty";

/** Kinds that take a node away for a while (bounded by `maxDown`). */
export const DOWN_KINDS: ReadonlySet<FaultKind> = new Set([
  "pause",
  "restart-keep",
  "restart-keep-delayed",
  "restart-empty-delayed",
  "restart-empty",
]);

/** One scheduled fault. `at` is ms from the start of the run. */
export interface FaultEvent {
  readonly at: number;
  readonly node: number;
  readonly kind: FaultKind;
  /** Request-level faults: how many requests it applies to. */
  readonly count?: number;
  /** `latency`: range of the added delay. */
  readonly ms?: readonly [number, number];
  /** `status-5xx` / `non-json`: the status and raw body. */
  readonly status?: number;
  readonly body?: string;
  /** `pause`: how long the redis-server stays stopped. */
  readonly forMs?: number;
  /** Restarts: time between the kill and the new redis-server. */
  readonly delayMs?: number;
}

/** Options of {@link buildSchedule}. */
export interface ScheduleOptions {
  readonly seed: number;
  readonly durationMs: number;
  readonly nodes: number;
  readonly lease: number;
  readonly profile: Profile;
  /** Most nodes down at once. @default ⌊(nodes − 1) / 2⌋ */
  readonly maxDown?: number;
  /** Mean time between two events. @default 250 */
  readonly meanGapMs?: number;
}

const BASE_WEIGHTS = {
  latency: 3,
  "status-5xx": 2,
  "non-json": 2,
  "reset-before": 1,
  "reset-after": 2,
  hang: 1,
  noscript: 1,
  pause: 2,
} as const;

const RESTART_WEIGHTS: Record<Profile, Partial<Record<FaultKind, number>>> = {
  "keep-data": { "restart-keep": 1.5, "restart-keep-delayed": 1 },
  "delayed-empty": { "restart-empty-delayed": 2 },
  mixed: { "restart-keep": 1, "restart-keep-delayed": 0.7, "restart-empty-delayed": 1 },
  unsafe: {
    "restart-keep": 0.5,
    "restart-keep-delayed": 0.5,
    "restart-empty-delayed": 0.5,
    "restart-empty": 2,
  },
};

/** Time a restarting node is counted as down beyond its delay (redis-server start-up). */
const RESTART_ALLOWANCE_MS = 1_500;

const NON_JSON_BODIES: readonly (readonly [number, string])[] = [
  [502, "<html><body><h1>502 Bad Gateway</h1></body></html>"],
  [503, "upstream connect error or disconnect/reset before headers"],
  [200, "OK but not JSON"],
  [500, ""],
];

function downFor(event: FaultEvent): number {
  if (event.kind === "pause") return event.forMs ?? 0;
  return (event.delayMs ?? 0) + RESTART_ALLOWANCE_MS;
}

/**
 * Build the schedule. Events fall in `[500 ms, duration − lease]`, so nodes are back and requests
 * drained well before the run stops.
 *
 * @example
 * buildSchedule({ seed: 7, durationMs: 15_000, nodes: 5, lease: 1_000, profile: "keep-data" })
 */
export function buildSchedule(options: ScheduleOptions): FaultEvent[] {
  const { durationMs, nodes, lease, profile } = options;
  const maxDown = options.maxDown ?? Math.floor((nodes - 1) / 2);
  const meanGap = options.meanGapMs ?? 250;
  const rng = createRng(derive(options.seed, "schedule"));
  const weights = { ...BASE_WEIGHTS, ...RESTART_WEIGHTS[profile] } as Record<FaultKind, number>;
  const events: FaultEvent[] = [];
  const windows: { node: number; from: number; to: number }[] = [];
  const end = durationMs - lease;
  for (
    let at = 500;
    at < end;
    at += Math.max(20, Math.round(-Math.log(1 - rng.next()) * meanGap))
  ) {
    const node = rng.int(0, nodes - 1);
    let kind = rng.weighted(weights);
    let event = shape(kind, at, node, lease, rng);
    if (DOWN_KINDS.has(kind)) {
      const to = at + downFor(event);
      const busy = windows.filter((w) => w.from < to && w.to > at);
      if (busy.some((w) => w.node === node) || new Set(busy.map((w) => w.node)).size >= maxDown) {
        // A majority must stay up: this one becomes a latency spike instead.
        kind = "latency";
        event = shape(kind, at, node, lease, rng);
      } else {
        windows.push({ node, from: at, to });
      }
    }
    events.push(event);
  }
  return events;
}

function shape(
  kind: FaultKind,
  at: number,
  node: number,
  lease: number,
  rng: ReturnType<typeof createRng>,
): FaultEvent {
  const base = { at, node, kind };
  switch (kind) {
    case "latency": {
      // Up to one and a half leases: far beyond the request timeout, and beyond the lease.
      const max = rng.int(Math.round(lease * 0.1), Math.round(lease * 1.5));
      return { ...base, ms: [Math.round(max / 3), max], count: rng.int(1, 20) };
    }
    case "status-5xx":
      return { ...base, status: rng.pick([500, 502, 503, 504]), count: rng.int(1, 15) };
    case "non-json": {
      const [status, body] = rng.pick(NON_JSON_BODIES);
      return { ...base, status, body, count: rng.int(1, 10) };
    }
    case "reset-before":
    case "reset-after":
      return { ...base, count: rng.int(1, 8) };
    case "hang":
    case "noscript":
      return { ...base, count: rng.int(1, 5) };
    case "pause":
      return { ...base, forMs: rng.int(Math.round(lease * 0.2), Math.round(lease * 1.6)) };
    case "restart-keep":
    case "restart-empty":
      return { ...base, delayMs: 0 };
    case "restart-keep-delayed":
    case "restart-empty-delayed":
      // Longer than the lease: every key the node held has expired by the time it is back.
      return { ...base, delayMs: lease + rng.int(200, Math.max(201, Math.round(lease / 2))) };
  }
}

/** Events per kind, for the report. */
export function countKinds(
  events: readonly { kind: FaultKind }[],
): Partial<Record<FaultKind, number>> {
  const counts: Partial<Record<FaultKind, number>> = {};
  for (const e of events) counts[e.kind] = (counts[e.kind] ?? 0) + 1;
  return counts;
}
