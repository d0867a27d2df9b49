/** One release of ours in flight on a node. */
interface InFlight {
  /** Past this (`performance.now()`), it no longer holds anyone up. */
  readonly until: number;
  ended: boolean;
  /** Waiters to tell when it ends (never on Workers: see {@link ReleaseOrder}). */
  readonly waiters: Set<() => void>;
}

/**
 * Waits for our releases in flight on one node and key, as {@link ReleaseOrder.after} found them:
 * resolves once they all ended, or after `ms`, whichever is first. Never rejects.
 *
 * @example
 * await order.after(node.index, lockKey)?.(timeoutMs / 2);
 */
export type ReleaseWait = (ms: number) => Promise<void>;

/** Keys tracked per node before the first sweep of records past their worst case. */
const SWEEP_MIN = 64;

/** How often a waiter on Workers looks again, at most, in ms. */
export const ORDER_POLL_MS = 5;

/** On Cloudflare Workers (workerd), a request must not be woken from another request's context. */
function onWorkers(): boolean {
  const agent = (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent;
  return agent === "Cloudflare-Workers";
}

/**
 * Our releases in flight, per node and lock key, within one `Locks` instance. An acquire of a
 * key on that node waits for them (`after`) before it is sent — per key: a lock on several keys
 * waits for our releases of each of them, and its own release holds up acquires of each.
 * Overtaking our own release there, an acquire would find our old token and count the node as
 * busy. This is liveness only: every
 * request may have run in any order, and a release only ever removes its own token
 * (docs/SAFETY.md §6, "Our releases first").
 *
 * Nothing here is a promise shared between callers. On Workers one `Locks` serves every request of
 * the isolate, and a request whose context ended never runs its continuations again: a waiter
 * that awaited a promise of such a request would wait until its own time ran out, and a promise
 * that request created could never settle. So each release is a plain record, dropped when it
 * ends or at its worst case (`ms`), whichever is first; each waiter waits on a promise and a timer
 * of its own, and reads the records. Elsewhere a release that ends also wakes its waiters at once;
 * on Workers they look again every {@link ORDER_POLL_MS} ms instead, so no request ever settles
 * another request's promise.
 *
 * @example
 * const order = new ReleaseOrder(3);
 * const ended = order.track(0, "lock:k", 1_000); // a release of lock:k sent to node 0
 * const wait = order.after(0, "lock:k"); // waits (at most ms) until that release ended
 * ended();
 * await wait?.(250);
 */
export class ReleaseOrder {
  readonly #nodes: Map<string, Set<InFlight>>[];
  /** Per node: how many keys may be tracked before the records past their worst case are swept. */
  readonly #sweepAt: number[];
  readonly #notifies = !onWorkers();

  constructor(nodes: number) {
    this.#nodes = Array.from({ length: nodes }, () => new Map());
    this.#sweepAt = Array.from({ length: nodes }, () => SWEEP_MIN);
  }

  /** Keys with releases tracked on node `index` (records past their worst case may remain). */
  tracked(index: number): number {
    return this.#nodes[index]?.size ?? 0;
  }

  /**
   * Record a release of `lockKeys` (one lock key, or every key of a lock on several) on node
   * `index` as in flight for at most `ms` (its worst case); call the result when it ended. It is
   * recorded under each of its keys, so an acquire of any one of them waits for it. Past `ms` it
   * no longer holds anyone up: on Workers, a release whose request ended may never report back.
   */
  track(index: number, lockKeys: string | readonly string[], ms: number): () => void {
    const lines = this.#nodes[index] as Map<string, Set<InFlight>>;
    // Releases that never report back (Workers) on keys nobody locks again would stay forever.
    if (lines.size >= (this.#sweepAt[index] ?? SWEEP_MIN)) this.#sweep(index, lines);
    const release: InFlight = { until: performance.now() + ms, ended: false, waiters: new Set() };
    const keys =
      typeof lockKeys === "string"
        ? [lockKeys]
        : lockKeys.length === 1
          ? lockKeys
          : [...new Set(lockKeys)];
    for (const lockKey of keys) {
      const inFlight = lines.get(lockKey) ?? new Set<InFlight>();
      lines.set(lockKey, inFlight);
      inFlight.add(release);
    }
    return () => {
      if (release.ended) return;
      release.ended = true;
      for (const lockKey of keys) {
        const inFlight = lines.get(lockKey);
        inFlight?.delete(release);
        if (inFlight?.size === 0) lines.delete(lockKey);
      }
      for (const notify of release.waiters) notify();
      release.waiters.clear();
    };
  }

  /**
   * A wait for every release tracked so far on node `index` under any of `lockKeys` (one lock
   * key, or every key of a lock on several) and not yet past its worst case, or `undefined` when
   * there is none (nothing to wait for): a release of `["a", "b"]` holds up an acquire of `"a"`,
   * and a release of `"a"` one of `["a", "b"]`, as the nodes would find our token on that key.
   */
  after(index: number, lockKeys: string | readonly string[]): ReleaseWait | undefined {
    const lines = this.#nodes[index];
    // Nothing in flight on that node (the usual case): no allocation.
    if (lines === undefined || lines.size === 0) return undefined;
    const now = performance.now();
    const pending = new Set<InFlight>();
    for (const lockKey of typeof lockKeys === "string" ? [lockKeys] : lockKeys) {
      const inFlight = lines.get(lockKey);
      if (inFlight === undefined) continue;
      for (const release of inFlight) {
        if (release.until <= now) inFlight.delete(release);
        else pending.add(release);
      }
      if (inFlight.size === 0) lines.delete(lockKey);
    }
    if (pending.size === 0) return undefined;
    const waiting = [...pending];
    return (ms) => waitFor(waiting, ms, this.#notifies);
  }

  /** Drop node `index`'s records past their worst case; next sweep at twice the keys left. */
  #sweep(index: number, lines: Map<string, Set<InFlight>>): void {
    const now = performance.now();
    for (const [key, inFlight] of lines) {
      for (const release of inFlight) if (release.until <= now) inFlight.delete(release);
      if (inFlight.size === 0) lines.delete(key);
    }
    this.#sweepAt[index] = Math.max(SWEEP_MIN, 2 * lines.size);
  }
}

/** Resolves once every one of `pending` ended or passed its worst case, or after `ms`. */
function waitFor(pending: readonly InFlight[], ms: number, notified: boolean): Promise<void> {
  const deadline = performance.now() + ms;
  return new Promise<void>((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      if (timer !== undefined) clearTimeout(timer);
      for (const release of pending) release.waiters.delete(check);
      resolve();
    };
    // When the earliest of: all ended, the last worst case, our deadline.
    function check(): void {
      const now = performance.now();
      const left = pending.filter((r) => !r.ended && r.until > now);
      if (left.length === 0 || now >= deadline) {
        finish();
        return;
      }
      const until = Math.min(deadline, Math.max(...left.map((r) => r.until)));
      if (timer !== undefined) clearTimeout(timer);
      // Woken by the releases themselves elsewhere; on Workers, look again on our own timer.
      const delay = notified ? until - now : Math.min(ORDER_POLL_MS, until - now);
      timer = setTimeout(check, Math.max(0, delay));
    }
    if (notified) for (const release of pending) release.waiters.add(check);
    check();
  });
}
