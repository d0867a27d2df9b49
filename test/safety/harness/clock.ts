/**
 * One clock for a multi-process run. Every process records `performance.timeOrigin +
 * performance.now()`: monotonic within the process, and close to the wall clock. Across processes
 * the origins can differ by the error with which each process read the wall clock at start (and by
 * NTP slewing since), so the parent measures each child's offset over IPC, NTP-style: it sends a
 * ping at `t1`, the child answers with its time `tc`, the reply arrives at `t2`. Then
 * `offset = tc − (t1 + t2) / 2`, off by at most `(t2 − t1) / 2`. The sample with the smallest round
 * trip wins; measuring at the start and at the end of the run also bounds the drift in between.
 *
 * Why not let the parent timestamp events as they arrive over IPC: that adds the IPC delay in one
 * direction only (a grant would look later than it was, which can hide an overlap), and the delay
 * is unbounded under load. Local timestamps plus a measured, bounded offset keep every interval
 * exact within its process and make the cross-process uncertainty an explicit number that the
 * checker uses as its tolerance.
 *
 * @module
 */

/** The shared time base: epoch-like milliseconds, monotonic within a process. */
export const now = (): number => performance.timeOrigin + performance.now();

/** One ping-pong exchange, all in ms: parent send, child time, parent receive. */
export interface SyncSample {
  readonly t1: number;
  readonly tc: number;
  readonly t2: number;
}

/** A child clock's offset to the parent clock (`child − parent`) and the bound on its error. */
export interface ClockOffset {
  readonly offset: number;
  readonly error: number;
}

/**
 * The offset from the sample with the smallest round trip.
 *
 * @example estimateOffset([{ t1: 0, tc: 105, t2: 10 }]) // { offset: 100, error: 5 }
 */
export function estimateOffset(samples: readonly SyncSample[]): ClockOffset {
  let best: SyncSample | undefined;
  for (const s of samples) {
    if (s.t2 < s.t1) throw new Error("sync sample received before it was sent");
    if (best === undefined || s.t2 - s.t1 < best.t2 - best.t1) best = s;
  }
  if (best === undefined) throw new Error("no sync samples");
  return { offset: best.tc - (best.t1 + best.t2) / 2, error: (best.t2 - best.t1) / 2 };
}

/**
 * Combine the estimates from the start and the end of a run: the mean offset, with an error that
 * covers both estimates' errors and the drift between them.
 *
 * @example combineOffsets({ offset: 10, error: 1 }, { offset: 12, error: 1 }) // { offset: 11, error: 2 }
 */
export function combineOffsets(start: ClockOffset, end: ClockOffset): ClockOffset {
  const offset = (start.offset + end.offset) / 2;
  const error = Math.max(
    Math.abs(start.offset - offset) + start.error,
    Math.abs(end.offset - offset) + end.error,
  );
  return { offset, error };
}
