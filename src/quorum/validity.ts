/**
 * Pure timing math of the Redlock algorithm. All values in milliseconds; `elapsed` comes from the
 * monotonic clock (`performance.now()`), never from `Date.now()`.
 *
 * @module
 */

/** Majority of `n` nodes: ⌊n/2⌋ + 1. */
export function quorumOf(n: number): number {
  return Math.floor(n / 2) + 1;
}

/**
 * Clock-drift allowance for a grant of `ttl` ms: `ttl × driftFactor + 2`, rounded up. The 2 ms
 * cover Redis's expiry precision (keys can expire up to ~1 ms early).
 *
 * @example drift(10_000, 0.01) // 102
 */
export function drift(ttl: number, driftFactor: number): number {
  return Math.ceil(ttl * driftFactor) + 2;
}

/**
 * Time the lock is still guaranteed ours after a round that took `elapsed` ms:
 * `ttl − elapsed − drift(ttl)`. May be negative.
 *
 * @example validity(10_000, 40, 0.01) // 9858
 */
export function validity(ttl: number, elapsed: number, driftFactor: number): number {
  return ttl - elapsed - drift(ttl, driftFactor);
}

/**
 * Whether a grant may be handed out: its validity must reach `minValidity` (and be positive).
 *
 * @example isValidGrant(9858, 10) // true
 */
export function isValidGrant(validityMs: number, minValidity: number): boolean {
  return validityMs > 0 && validityMs >= minValidity;
}

/**
 * The largest validity a grant of `ttl` can ever have (zero elapsed time), used to refuse
 * hopeless attempts before calling any node.
 */
export function bestValidity(ttl: number, driftFactor: number): number {
  return validity(ttl, 0, driftFactor);
}

/**
 * When the lock can next be expected free: the smallest wait after which a majority of nodes
 * could be free, given `free` nodes free now and the holders' PTTLs on the others (`-1` = no
 * expiry counts as never). Returns `undefined` when even every holder expiring would not free a
 * majority (the missing votes are failures, not holders).
 *
 * @example freeAfter([300, 100, 200], 0, 2) // 200
 */
export function freeAfter(
  holderPttls: readonly number[],
  free: number,
  quorum: number,
): number | undefined {
  const needed = quorum - free;
  if (needed <= 0) return 0;
  const expiring = holderPttls.filter((p) => p >= 0).sort((a, b) => a - b);
  return expiring[needed - 1];
}
