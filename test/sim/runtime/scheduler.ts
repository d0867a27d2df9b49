/**
 * Virtual time for a simulated schedule: a discrete-event queue ordered by time, then by the order
 * events were scheduled, so a run is a pure function of its inputs. After each event every promise
 * continuation it caused runs (the microtask queue is drained by yielding one macrotask) before
 * the next event, so the library's code between two timers runs at one instant, as it would on a
 * fast machine.
 *
 * Why one `setImmediate` per event is enough: Node drains the whole microtask queue (and
 * `process.nextTick`) after every callback, including jobs queued while draining, before it
 * reaches the check phase where `setImmediate` callbacks run. Contexts made with `node:vm` share
 * the isolate's microtask queue (unless created with `microtaskMode: "afterEvaluate"`, which the
 * realms do not use), so promise chains that cross realms are drained too. Only work waiting on a
 * real macrotask (a real timer, I/O) would escape, and the realms have no access to any.
 *
 * @module
 */

interface Event {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/** A scheduled event; `cancel()` is idempotent. */
export interface Scheduled {
  cancel(): void;
}

/** Where virtual epoch time starts (2026-01-01): realistic magnitudes for epoch-ms arguments. */
export const EPOCH = 1_767_225_600_000;

/** Why {@link Scheduler.run} returned: no event left, the time limit, or the event limit. */
export type StopReason = "idle" | "until" | "maxEvents";

/** Limits of one {@link Scheduler.run}. */
export interface RunLimits {
  /** Virtual epoch ms: events later than this stay queued. */
  readonly until: number;
  /** Events to run at most in total (a livelock guard: counts `Scheduler.events`). */
  readonly maxEvents: number;
}

const drain = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * @example
 * const scheduler = new Scheduler();
 * scheduler.after(10, () => console.log(scheduler.now));
 * await scheduler.run({ until: EPOCH + 60_000, maxEvents: 10_000 });
 */
export class Scheduler {
  /** Virtual epoch ms. */
  now = EPOCH;
  /** Events run so far. */
  events = 0;
  /** Why the last {@link run} returned. */
  stopped: StopReason | undefined;
  readonly #heap: Event[] = [];
  #seq = 0;
  #live = 0;

  /** Run `fn` at virtual time `at` (not before now). */
  at(at: number, fn: () => void): Scheduled {
    if (Number.isNaN(at)) throw new RangeError("an event at NaN");
    const event: Event = { at: Math.max(at, this.now), seq: this.#seq++, fn, cancelled: false };
    this.#push(event);
    this.#live++;
    return {
      cancel: () => {
        if (event.cancelled) return;
        event.cancelled = true;
        this.#live--;
      },
    };
  }

  /** Run `fn` after `ms` of virtual time. */
  after(ms: number, fn: () => void): Scheduled {
    return this.at(this.now + Math.max(0, ms), fn);
  }

  /** Resolves after `ms` of virtual time. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  /** Events scheduled and neither run nor cancelled. */
  get pending(): number {
    return this.#live;
  }

  /**
   * Run events until none is left, or the next one is after `until`, or `maxEvents` ran (a
   * livelock guard). Returns whether the queue ran empty ({@link stopped} says why not). An
   * exception thrown by an event propagates (as an uncaught one would end a process).
   */
  async run(limits: RunLimits): Promise<boolean> {
    await drain();
    for (;;) {
      const event = this.#pop();
      if (event === undefined) {
        this.stopped = "idle";
        return true;
      }
      if (event.at > limits.until || this.events >= limits.maxEvents) {
        this.#push(event);
        this.stopped = event.at > limits.until ? "until" : "maxEvents";
        return false;
      }
      this.#live--;
      // Marked so that a late cancel() of a handle whose event ran does not count it twice.
      event.cancelled = true;
      this.now = event.at;
      this.events++;
      event.fn();
      await drain();
    }
  }

  #push(event: Event): void {
    const heap = this.#heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i] as Event, heap[parent] as Event)) break;
      [heap[i], heap[parent]] = [heap[parent] as Event, heap[i] as Event];
      i = parent;
    }
  }

  #pop(): Event | undefined {
    const heap = this.#heap;
    for (;;) {
      const top = heap[0];
      if (top === undefined) return undefined;
      const last = heap.pop() as Event;
      if (heap.length > 0) {
        heap[0] = last;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < heap.length && before(heap[l] as Event, heap[m] as Event)) m = l;
          if (r < heap.length && before(heap[r] as Event, heap[m] as Event)) m = r;
          if (m === i) break;
          [heap[i], heap[m]] = [heap[m] as Event, heap[i] as Event];
          i = m;
        }
      }
      if (!top.cancelled) return top;
    }
  }
}

const before = (a: Event, b: Event): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq);
