/**
 * Randomness and waiting for the lock loop: owner tokens, abortable sleeps, timers
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

/** Let a timer not keep a Node/Bun process alive (no-op where timers are numbers). */
export function unref(timer: ReturnType<typeof setTimeout>): void {
  (timer as { unref?: () => void }).unref?.();
}

/**
 * Resolve after `ms`, or as soon as `signal` aborts or `interrupt` settles (never rejects).
 *
 * @example await sleep(200, lock.signal);
 */
export function sleep(
  ms: number,
  signal?: AbortSignal,
  interrupt?: Promise<unknown>,
): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) {
      resolve();
      return;
    }
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", finish);
      resolve();
    };
    const timer = setTimeout(finish, ms);
    signal?.addEventListener("abort", finish, { once: true });
    interrupt?.then(finish, finish);
  });
}

/**
 * Reject with `signal.reason` as soon as `signal` aborts, not when `work` ends (a look in flight
 * may take a request timeout). If `work` still produces a grant afterwards, `orphan` releases it.
 *
 * @example
 * const grant = await abortable(acquireLoop(core, target, call), call.signal, release);
 */
export function abortable<T>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
  orphan: (value: T) => void,
): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      settled = true;
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (settled) orphan(value);
        else resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        if (!settled) reject(error);
      },
    );
  });
}
