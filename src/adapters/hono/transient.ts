/**
 * Requests that `lock()` answered with its `onBusy` or `onError` response (busy, too few nodes,
 * budget spent): whatever that response is — the default problem+json or an app's own, say a
 * 423 — it says "not now", so an `idempotency()` around it never keeps it.
 *
 * @module
 */
import type { Context } from "hono";

const answered = new WeakSet<Context>();

/**
 * Mark `c` as answered by `lock()`'s busy/unavailable path.
 *
 * @example
 * if (isLockBusyError(error)) { markLockAnswer(c); return onBusy(c, error); }
 */
export function markLockAnswer(c: Context): void {
  answered.add(c);
}

/**
 * Whether `lock()` answered `c` busy or unavailable.
 *
 * @example
 * const transient = isLockAnswer(c);
 */
export const isLockAnswer = (c: Context): boolean => answered.has(c);
