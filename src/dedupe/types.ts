import type { Budget } from "../budget";

/**
 * Options of {@link once}. Validated per call (`ConfigurationError` names the option).
 *
 * @example
 * await once(locks, `report:${day}`, rebuild, { lease: 30_000, retention: 7 * 86_400_000 });
 */
export interface OnceOptions {
  /**
   * Lease in ms of the lock held while the job runs (auto-extended until it ends): the longest a
   * crashed run keeps duplicates out before a retry can run the job.
   * @default the `createLocks` lease (10000)
   */
  readonly lease?: number | undefined;
  /**
   * How long the done marker is kept after a successful run, in ms (positive integer): duplicates
   * and retries arriving within it are skipped; later ones run the job again. Make it longer than
   * the longest redelivery window of your trigger.
   * @default 86400000 (24 h)
   */
  readonly retention?: number | undefined;
  /** Execution budget: sizes the lock's TTL and counts node requests (see `budget`). */
  readonly budget?: Budget | undefined;
  /** Cancels the acquisition (the call rejects with `signal.reason`); the job never starts. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * What {@link once} did.
 *
 * - `{ status: "ran", value, recorded }`: `fn` ran and returned `value`. `recorded` is false when
 *   the done marker could not be written on a majority of nodes; a duplicate arriving later may
 *   then run the job again.
 * - `{ status: "skipped", reason: "done", retryAfter }`: the job already ran for this key;
 *   `retryAfter` is the done marker's remaining retention in ms.
 * - `{ status: "skipped", reason: "running", retryAfter }`: another run holds the key right now;
 *   `retryAfter` is when its lock runs out at the latest, in ms (it may finish and record the
 *   job earlier).
 *
 * @example
 * const result = await once(locks, key, job);
 * if (result.status === "skipped") console.log(`skipped (${result.reason})`);
 */
export type OnceResult<T> =
  | { readonly status: "ran"; readonly value: T; readonly recorded: boolean }
  | {
      readonly status: "skipped";
      readonly reason: "done" | "running";
      readonly retryAfter: number;
    };
