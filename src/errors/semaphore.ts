import { LockBusyError, type LockBusyErrorOptions } from "./errors";
import { describeNodes } from "./report";

/** Options of {@link SemaphoreBusyError}. */
export interface SemaphoreBusyErrorOptions extends LockBusyErrorOptions {
  /** The semaphore's permit count (`permits` of `semaphore()`). */
  readonly permits: number;
  /** The slots the last look saw held on a majority of nodes. */
  readonly held: number;
}

/**
 * Every permit of a semaphore is held (`semaphore(locks, key, { permits }).acquire()` and
 * `tryAcquire()`'s callers that wait). A {@link LockBusyError}, so busy handling written for locks
 * (`isLockBusyError`, a 409 or a retry after `retryAfter`) keeps working; `limit()` answers 429.
 * `retryAfter`: ms until one permit is free at most, if nobody extends (its holders' PTTLs on a
 * majority); `held`: the slots seen held on a majority; `permits`: the semaphore's count.
 *
 * @example
 * catch (e) {
 *   if (isSemaphoreBusyError(e)) return new Response(null, { status: 429,
 *     headers: { "Retry-After": String(Math.max(1, Math.ceil(e.retryAfter / 1000))) } });
 * }
 */
export class SemaphoreBusyError extends LockBusyError {
  override name = "SemaphoreBusyError";
  declare readonly permits: number;
  declare readonly held: number;

  constructor(key: string, retryAfter: number, options: SemaphoreBusyErrorOptions) {
    super(key, retryAfter, { ...options, subject: "semaphore" });
    const { permits, held, outcomes = [] } = options;
    const nodes = describeNodes(outcomes);
    this.message = `semaphore "${key}" is at capacity: ${held} of ${permits} permits held on a majority, one free in at most ${retryAfter} ms${nodes === "" ? "" : ` (${nodes})`}`;
    this.permits = permits;
    this.held = held;
  }
}

/** True for a {@link SemaphoreBusyError} (by name, as every guard: also from another realm). */
export const isSemaphoreBusyError = (value: unknown): value is SemaphoreBusyError =>
  typeof value === "object" &&
  value !== null &&
  (value as { name?: unknown }).name === "SemaphoreBusyError" &&
  typeof (value as { message?: unknown }).message === "string";
