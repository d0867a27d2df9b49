/**
 * When a waiter is in the nodes' queues, for the order properties of locks (`properties.ts`
 * "queue-order") and of permits (`permit-waits.ts` "permit-order"): from its registration, which
 * reaches every node within {@link REGISTERED_WITHIN} on a fault-free schedule, until
 * {@link queuedUntil}. A lock's room and a semaphore's are the same Lua (`queueLua` in lua.ts),
 * with the same records and deadlines.
 *
 * @module
 */

/**
 * Time after a waiter became the first of its instance's line on a key (its call, or the last
 * grant of its instance before; a permit call, which stands in no line: its call) by which its
 * registration reached every node on a fault-free schedule: the first look and the streams'
 * opening take a few ms each.
 */
export const REGISTERED_WITHIN = 50;

/** A waiter as {@link queuedUntil} reads it: its call (global ms), its wait and its clock. */
export interface QueuedWaiter {
  readonly requested: number;
  /** Its wait, in ms of its instance's clock. */
  readonly wait: number;
  /** Its instance's clock rate (its ms per virtual ms; 1 when not given). */
  readonly rate?: number | undefined;
}

/**
 * The earliest virtual time at which waiter `w` may have left the queue on a majority of nodes
 * (its grant aside): from then on another caller may be placed on a majority without passing it.
 * `nodeRates`: each node's clock rate (all 1 when not given).
 *
 * - Its caller stops at `requested` + wait / c (c: its clock's rate; `performance.now()` runs at
 *   c) and then sends DISCARD, which removes its record on any node at any time after.
 * - A node drops its record when the node's clock passes the registration's `p` + `waitMs`
 *   (`head` in lua.ts; `p` is rounded up, so never sooner than `waitMs` node-ms after the script
 *   ran). A registration sent at t carries `waitMs` ≥ (W − t)·c, W the caller's stop: at a node of
 *   rate n, the record lasts until at least t + (W − t)·c / n real ms. Over t in [requested, W]
 *   that is at least W when c ≥ n, else at least `requested` + wait / n (t = requested: the first
 *   registration; every later look or pass replaces it with a later deadline).
 * - Another caller needs a majority without the record: the Q-th earliest of those node bounds.
 *
 * So min(W, `requested` + wait / n), n the Q-th fastest node clock. No slack: with every rate 1
 * it is `requested` + wait, the end seed 20261142's fix used. (Seed 20261143's finding showed the
 * difference — a client 0.423 % fast stops a 602 ms wait 2.5 ms before `requested` + 602 — though
 * what broke there was the client's count of its hand-offs, not the check: docs/TESTING.md.)
 *
 * @example
 * const end = Math.min(w.end, queuedUntil(w, input.nodeRates));
 */
export function queuedUntil(w: QueuedWaiter, nodeRates: readonly number[] | undefined): number {
  const client = w.requested + w.wait / (w.rate ?? 1);
  const rates = [...(nodeRates ?? [1])].sort((a, b) => b - a);
  const quorum = Math.floor(rates.length / 2) + 1;
  const node = w.requested + w.wait / (rates[quorum - 1] ?? 1);
  return Math.min(client, node);
}
