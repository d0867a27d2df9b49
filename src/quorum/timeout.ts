/** Smallest default per-node request timeout, ms: REST round trips over the internet take tens of ms. */
export const REQUEST_TIMEOUT_FLOOR = 250;

/** Share of the lease a default per-node request timeout takes (redsync's timeoutFactor). */
export const REQUEST_TIMEOUT_FACTOR = 0.05;

/**
 * Default per-node request timeout for a lease: `max(250, round(lease × 0.05))`, capped at
 * `⌊lease / 3⌋` so that a reply arriving just before the timeout still leaves most of the lease as
 * validity. A node slower than this counts as failed for that round.
 *
 * @example defaultRequestTimeout(10_000) // 500
 * @example defaultRequestTimeout(2_000)  // 250
 */
export function defaultRequestTimeout(lease: number): number {
  const scaled = Math.max(REQUEST_TIMEOUT_FLOOR, Math.round(lease * REQUEST_TIMEOUT_FACTOR));
  return Math.max(1, Math.min(scaled, Math.floor(lease / 3)));
}

/**
 * One abort timer for all requests of a round (they share the per-node timeout): `signal` aborts
 * with a `TimeoutError` after `timeoutMs`; call `clear` once every request settled.
 *
 * @example
 * const timer = roundTimer(500);
 * await Promise.allSettled(nodes.map((n) => send(n, { signal: timer.signal })));
 * timer.clear();
 */
export function roundTimer(timeoutMs: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError"));
  }, timeoutMs);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
