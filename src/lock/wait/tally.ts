import { drift } from "../../quorum";

/** What one node's placement of our token is worth: see {@link Tally}. */
interface Counted {
  /** Until when (our `performance.now()` clock) the node keeps our token at least. */
  readonly bound: number;
  /** The look whose registration or request the bound counts from. */
  readonly look: number;
  /** The fence the node issued with the placement (0: none). */
  readonly fence: number;
}

/** A majority counted (see {@link Tally.decide}). */
export interface Counting {
  /** The Q-th latest bound: a majority keeps the token at least until then. */
  readonly validUntil: number;
  /** The highest fence any counted node issued (0 without fencing). */
  readonly fence: number;
  /** The nodes counted, by index. */
  readonly nodes: readonly number[];
}

/**
 * What a waiting call counts of the nodes' placements of its token (docs/SAFETY.md §2 P1,
 * P2, P3): per node, a lower bound on the real time until which the node
 * keeps the token, read from our own clock, so that a majority of bounds is a grant's validity
 * exactly as a round's start plus its TTL is (E2):
 *
 * - a look that placed or found the token (P1, P2): the look's start + T − drift(T);
 * - a hand-off message (P3) for look `i` with the node's `gap` and hand-off TTL `handMs`: look
 *   i's start + D − drift(D), D = gap + handMs. Look i's registration ran on the node after the
 *   look started, and the hand-off ran at least `gap` node-ms after it, with `PX handMs`.
 *
 * After a pass numbered `j` (H5), nothing counted before it counts, and nothing evidenced by a
 * look numbered below `j` is counted any more: a pass removes only placements whose newest look
 * there is older than `j`.
 *
 * @example
 * const tally = new Tally(core.quorum, options.minValidity, options.driftFactor);
 * tally.placed(0, { look: 1, start: t0, ttl: 10_000, fence: 0 });
 * tally.handed(1, { look: 1, start: t0, gap: 240, handMs: 1_000, fence: 0 });
 * const counting = tally.decide(performance.now()); // { validUntil, fence, nodes } or undefined
 */
export class Tally {
  readonly #counted = new Map<number, Counted>();
  /** Evidence from looks numbered below this is not counted (the last pass's number). */
  #from = 0;

  constructor(
    private readonly quorum: number,
    private readonly minValidity: number,
    private readonly driftFactor: number,
  ) {}

  /** Node `index` placed or kept our token for look `look`, started at `start`, for `ttl` ms. */
  placed(index: number, by: { look: number; start: number; ttl: number; fence: number }): void {
    const { look, start, ttl, fence } = by;
    this.#count(index, { bound: start + ttl - drift(ttl, this.driftFactor), look, fence });
  }

  /**
   * Node `index` handed us the key: its message names look `look` (started at `start`), the node
   * ms `gap` since that look's registration ran there, and the hand-off's TTL `handMs`.
   */
  handed(
    index: number,
    by: { look: number; start: number; gap: number; handMs: number; fence: number },
  ): void {
    const { look, start, gap, handMs, fence } = by;
    const span = gap + handMs;
    this.#count(index, { bound: start + span - drift(span, this.driftFactor), look, fence });
  }

  /**
   * Node `index` was seen holding something else by look `look`'s request: our token was not
   * there when that request ran. That forgets only evidence of earlier looks. A hand-off naming
   * `look` (or a later one) ran on the node after that request — the request itself registered
   * the look there — so it is newer than the refusal however the two reach us: the message comes
   * on the stream, the answer on its request, and either may arrive first.
   */
  lost(index: number, look: number): void {
    const counted = this.#counted.get(index);
    if (counted !== undefined && counted.look < look) this.#counted.delete(index);
  }

  /** A pass numbered `look` was sent: forget everything counted, and count only from it on. */
  passed(look: number): void {
    this.#from = Math.max(this.#from, look);
    this.#counted.clear();
  }

  /** The nodes counted now (with a bound still ahead of `now`). */
  holding(now: number): number[] {
    return [...this.#counted].filter(([, c]) => c.bound > now).map(([index]) => index);
  }

  /**
   * A majority counted with at least `minValidity` left at `now`, or `undefined`.
   */
  decide(now: number): Counting | undefined {
    const live = [...this.#counted].filter(([, c]) => c.bound > now);
    if (live.length < this.quorum) return undefined;
    live.sort((a, b) => b[1].bound - a[1].bound);
    const validUntil = (live[this.quorum - 1] as [number, Counted])[1].bound;
    if (validUntil - now < this.minValidity) return undefined;
    const fence = Math.max(0, ...live.map(([, c]) => c.fence));
    return { validUntil, fence, nodes: live.map(([index]) => index) };
  }

  #count(index: number, counted: Counted): void {
    if (counted.look < this.#from) return;
    const before = this.#counted.get(index);
    // Two pieces of evidence for one node: the node keeps the token until the later bound (its
    // expiry only goes up while it holds the token, E1, and a pass cleared older ones).
    if (before !== undefined && before.bound >= counted.bound) return;
    this.#counted.set(index, { ...counted, fence: Math.max(counted.fence, before?.fence ?? 0) });
  }
}
