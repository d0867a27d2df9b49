/**
 * A simulated node's own clock: the epoch milliseconds its keys expire by (and `TIME` reads),
 * running at `rate` × virtual time from an epoch `offset` of its own. A node restart does not touch
 * it (docs/SAFETY.md A1: no node clock jumps); it reads whole milliseconds, as redis-server's
 * `mstime()` does, so every PTTL a script sees is an integer.
 *
 * Virtual time is the simulation's global time: every property in `check/` is stated in it, so
 * whatever a node reports in its own time (a key's deadline, a tombstone's PTTL) is converted back
 * with {@link NodeClock.goneAt} before the checker sees it.
 *
 * Why the offsets cannot matter: nothing safety-relevant compares one clock's epoch reading with
 * another's. Expiry on a node is measured by that node's clock alone (PX, PEXPIRE, PTTL: spans),
 * and the scripts never read a client's epoch time as a deadline. Only rates matter, and only
 * between a client and a node (see `CLOCK_RATE_SPREAD` in `workload/clocks.ts`).
 *
 * @module
 */

import type { Scheduler } from "./scheduler";

/** How one node's clock differs from virtual time. */
export interface NodeClockSpec {
  /** Its rate relative to virtual time (1: exact). */
  readonly rate: number;
  /** Where it reads at the schedule's start, relative to virtual epoch time (ms). */
  readonly offsetMs: number;
}

/**
 * @example
 * const clock = new NodeClock(scheduler, { rate: 1.004, offsetMs: -12_000 });
 * const node = new SimNode({ now: () => clock.now(), sha1 });
 * clock.goneAt(clock.now() + 1_000); // virtual time at which a key set with PX 1000 now is gone
 */
export class NodeClock {
  /** Virtual time at which the clock was made (its offset applies from there). */
  readonly #origin: number;

  constructor(
    private readonly scheduler: Scheduler,
    readonly spec: NodeClockSpec,
  ) {
    if (!(spec.rate > 0)) throw new RangeError(`a node clock's rate must be > 0, got ${spec.rate}`);
    this.#origin = scheduler.now;
  }

  /** The node's reading now: whole epoch milliseconds (floored: never ahead of its exact time). */
  now(): number {
    return Math.floor(this.#exact(this.scheduler.now));
  }

  /** The node's exact (unrounded) reading at virtual time `at`. */
  #exact(at: number): number {
    return this.#origin + this.spec.offsetMs + (at - this.#origin) * this.spec.rate;
  }

  /** Virtual time at which the node's exact clock reads `nodeMs`. */
  toVirtual(nodeMs: number): number {
    return this.#origin + (nodeMs - this.#origin - this.spec.offsetMs) / this.spec.rate;
  }

  /**
   * Virtual time from which a key whose deadline is `when` (node epoch ms) is gone: a key lives
   * while the node's reading is at most `when` (Redis 7), and the reading is floored, so it is
   * gone once the exact clock reaches `when + 1`. `Infinity` for `Infinity` (no expiry).
   */
  goneAt(when: number): number {
    return when === Number.POSITIVE_INFINITY ? when : this.toVirtual(when + 1);
  }
}
