/**
 * Our releases in flight, per node and lock key, within one `Locks` instance. An acquire of the
 * same key on that node waits for them (`after`) before it is sent: overtaking our own release
 * there, it would find our old token and count the node as busy. Entries disappear as soon as
 * their releases ended, so an uncontended key leaves nothing behind.
 *
 * @example
 * const order = new ReleaseOrder(3);
 * const ended = order.track(0, "lock:k", 1_000); // a release of lock:k sent to node 0
 * order.after(0, "lock:k"); // a promise that settles once it ended
 * ended();
 */
export class ReleaseOrder {
  readonly #nodes: Map<string, { readonly done: Promise<void>; readonly until: number }>[];

  constructor(nodes: number) {
    this.#nodes = Array.from({ length: nodes }, () => new Map());
  }

  /**
   * Record a release of `lockKey` on node `index` as in flight for at most `ms` (its worst case);
   * call the result when it ended. Past `ms` it no longer holds anyone up: on Workers, a release
   * whose request ended may never report back.
   */
  track(index: number, lockKey: string, ms: number): () => void {
    const inFlight = this.#nodes[index] as Map<string, { done: Promise<void>; until: number }>;
    let ended!: () => void;
    const mine = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const before = inFlight.get(lockKey);
    const until = Math.max(performance.now() + ms, before?.until ?? 0);
    const done = before === undefined ? mine : Promise.all([before.done, mine]).then(() => {});
    const entry = { done, until };
    inFlight.set(lockKey, entry);
    void done.then(() => {
      if (inFlight.get(lockKey) === entry) inFlight.delete(lockKey);
    });
    return ended;
  }

  /** Settles once every release of `lockKey` on node `index` tracked so far has ended. */
  after(index: number, lockKey: string): Promise<void> | undefined {
    const inFlight = this.#nodes[index];
    const entry = inFlight?.get(lockKey);
    if (entry === undefined) return undefined;
    if (performance.now() < entry.until) return entry.done;
    inFlight?.delete(lockKey);
    return undefined;
  }
}
