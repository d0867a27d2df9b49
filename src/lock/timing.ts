/**
 * Randomness and waiting for the lock loop: owner tokens, retry delays, abortable sleeps, timers
 * that do not keep a Node process alive. Random values come from `crypto.getRandomValues`.
 *
 * @module
 */

/** A fresh owner token: 128 random bits as 32 lower-case hex characters. */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** A uniform random number in [0, 1) from `crypto.getRandomValues`. */
export function random(): number {
  const [value = 0] = crypto.getRandomValues(new Uint32Array(1));
  return value / 2 ** 32;
}

/**
 * Sleep before retry `attempt` (0-based). `cap = min(retryDelayMax, retryDelay × 2^attempt)`.
 * - The holders' grants end within the cap (`freeIn < cap`, from their PTTLs): wake just after
 *   that, `freeIn + uniform(0, retryDelay)`, so a waiter neither polls a lock that is about to
 *   expire nor sleeps past it; the jitter spreads waiters out.
 * - Otherwise full jitter, `uniform(0, cap)`: the holder may release early, so keep checking,
 *   exponentially less often.
 * Never more than `retryDelayMax`.
 *
 * @example retryDelay(0, 5_000, 50, 1_000) // somewhere in [0, 50)
 * @example retryDelay(6, 120, 50, 1_000)   // somewhere in [120, 170)
 */
export function retryDelay(
  attempt: number,
  freeIn: number | undefined,
  base: number,
  max: number,
  rand: () => number = random,
): number {
  const cap = Math.min(max, base * 2 ** Math.min(attempt, 30));
  if (freeIn !== undefined && freeIn < cap) {
    return Math.min(max, Math.max(0, freeIn) + Math.floor(rand() * base));
  }
  return Math.floor(rand() * cap);
}

/** Let a timer not keep a Node/Bun process alive (no-op where timers are numbers). */
export function unref(timer: ReturnType<typeof setTimeout>): void {
  (timer as { unref?: () => void }).unref?.();
}

/** Resolve after `ms`, or as soon as `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
