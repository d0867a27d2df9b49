/**
 * What a safety run records: one {@link GrantRecord} per successful acquisition (with what the
 * holder did under the lock), the final state of the protected resource, the data-loss events
 * (nodes restarted empty), and the lock keys still present after the run. The checker
 * (`checker.ts`) is a pure function over this.
 *
 * Times are milliseconds on one shared clock: `performance.timeOrigin + performance.now()` of the
 * process that recorded them, translated to the parent's clock for child processes (see
 * `clock.ts`). `clockError[source]` bounds how far a source's translated times may be off.
 *
 * @module
 */

import type { ReleaseResult } from "../../../src/index";

/** The non-atomic read-modify-write of the counter under the lock. */
export type CounterStep =
  /** GET returned `read`, SET wrote `read + 1` and was acknowledged at `ackAt`. */
  | {
      readonly state: "done";
      readonly read: number;
      readonly readAt: number;
      readonly ackAt: number;
    }
  /** Not written: the lock's validity was too short to start, or ran low before the SET. */
  | { readonly state: "abandoned"; readonly read?: number; readonly why: string }
  /** The SET was sent but its outcome is unknown (resource error); it may or may not have landed. */
  | { readonly state: "uncertain"; readonly read: number; readonly why: string };

/** The fenced write under the lock: `accepted` when the resource took the fence. */
export type FencedStep =
  | {
      readonly state: "done";
      readonly read: number;
      readonly accepted: boolean;
      readonly at: number;
    }
  | { readonly state: "abandoned"; readonly why: string }
  | { readonly state: "uncertain"; readonly read: number; readonly why: string };

/** One successful acquisition and what its holder did. */
export interface GrantRecord {
  /** Unique id, `<source>/c<client>#<n>`. */
  readonly id: string;
  /** Clock source (process) that recorded the times: `"main"`, `"p1"`, ... */
  readonly source: string;
  readonly key: string;
  /** `acquire()` called. */
  readonly requested: number;
  /** `acquire()` resolved: the holder may act from here. */
  readonly granted: number;
  /** End of validity as known to the holder, moved by successful extensions. */
  validEnd: number;
  /** Fence token (fencing runs). */
  readonly fence?: number | undefined;
  /** `release()` called (absent: the holder "crashed" and let the lock expire). */
  releaseStart?: number;
  releaseStatus?: ReleaseResult["status"];
  counter?: CounterStep;
  fenced?: FencedStep;
  /** Successful and failed `extend()` calls. */
  extended: number;
  extendFailed: number;
  /** `lock.signal` aborted while held (validity ran low, or lost). */
  lostAt?: number;
}

/** A node that lost its data (restarted empty) at `at`. */
export interface Wipe {
  readonly node: number;
  readonly at: number;
  /** When it answered again (restart delay + start-up). */
  readonly backAt?: number;
}

/** A lock key still present on a node after the run, once the lease had been waited out. */
export interface Leftover {
  readonly node: number;
  readonly key: string;
  /** PTTL in ms (-1: no expiry). */
  readonly pttl: number;
}

/** Final state of the protected resource for one lock key. */
export interface ResourceState {
  /** The non-atomic counter. */
  readonly counter: number;
  /** The counter written only through the fenced script. */
  readonly fencedCounter: number;
  /** The last fence the resource accepted. */
  readonly lastFence: number;
}

/** Everything the checker needs. */
export interface History {
  readonly grants: readonly GrantRecord[];
  /** Per lock key. */
  readonly resource: Readonly<Record<string, ResourceState>>;
  readonly wipes: readonly Wipe[];
  readonly leftovers: readonly Leftover[];
  /** Bound on the clock error of each source (ms); `main` is 0. */
  readonly clockError: Readonly<Record<string, number>>;
}
