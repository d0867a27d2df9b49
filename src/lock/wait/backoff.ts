import { random } from "../timing";

/**
 * Waiting strategy 3, pacing: the retry schedule of a polling waiter. Keeps docs/SAFETY.md §6
 * "Progress" (a waiter looks again at the latest after `retryDelayMax`); liveness only.
 *
 * @module
 */

/**
 * Slack when comparing a holder's PTTL with the one seen earlier (ms): PTTLs of one grant differ a
 * little between nodes, and a node's clock ticks in whole milliseconds.
 */
const TURNOVER_SLACK = 25;

/** While the lock keeps changing hands, the cap stops growing at this share of `max`. */
const TURNOVER_CAP_SHARE = 0.25;

/**
 * The retry schedule of one waiter: how long to sleep after a busy look at the lock.
 *
 * - The holder's grant ends within the cap (`freeIn`, from PTTLs): wake just after that,
 *   `freeIn + uniform(0, base)`, so a waiter neither polls a lock that is about to expire nor
 *   sleeps past it.
 * - Otherwise full jitter, `uniform(0, cap)`, with a cap that doubles from `base` with every busy
 *   look, up to `max`: a long holder is checked exponentially less often.
 * - A look that finds a new holder (the PTTL went up since the previous look: the lock changed
 *   hands in between) keeps the cap at `max / 4` or below: holds are short, the lock is often
 *   free, and a waiter backed off to `max` would leave it idle. Not lower: every look of every
 *   waiter is a request, and under steady turnover waiters that look more often mostly find it
 *   taken again.
 *
 * Never more than `max`.
 *
 * @example
 * const backoff = new Backoff(50, 1_000);
 * backoff.observe(9_800, performance.now()); // a busy look: the holder's PTTL
 * await sleep(backoff.next(undefined));
 */
export class Backoff {
  #looks = 0;
  #turnovers = 0;
  #turnedOver = false;
  #last: { readonly pttl: number; readonly at: number } | undefined;

  constructor(
    readonly base: number,
    readonly max: number,
    readonly rand: () => number = random,
  ) {}

  /** Busy looks that found a new holder since the previous look. */
  get turnovers(): number {
    return this.#turnovers;
  }

  /**
   * Record a busy look: `pttl` is the holder's remaining time on the node(s) looked at (`-1` or
   * `undefined` when unknown). Returns whether the lock changed hands since the previous look.
   */
  observe(pttl: number | undefined, now: number): boolean {
    const last = this.#last;
    const known = pttl !== undefined && pttl >= 0;
    const turnover =
      known && last !== undefined && pttl > last.pttl - (now - last.at) + TURNOVER_SLACK;
    if (turnover) this.#turnovers++;
    this.#turnedOver = turnover;
    this.#looks++;
    this.#last = known ? { pttl, at: now } : undefined;
    return turnover;
  }

  /** The cap of the next sleep (see the class comment). */
  cap(): number {
    const { base, max } = this;
    const grown = Math.min(max, base * 2 ** Math.min(Math.max(0, this.#looks - 1), 30));
    return this.#turnedOver ? Math.min(grown, Math.max(base, max * TURNOVER_CAP_SHARE)) : grown;
  }

  /** The next sleep in ms, given when the holders' grants end (`freeIn`), if known. */
  next(freeIn: number | undefined): number {
    const cap = this.cap();
    if (freeIn !== undefined && freeIn < cap) {
      return Math.min(this.max, Math.max(0, freeIn) + Math.floor(this.rand() * this.base));
    }
    return Math.floor(this.rand() * cap);
  }
}
