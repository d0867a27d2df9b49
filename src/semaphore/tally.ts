/**
 * What a waiting permit call counts of the nodes, per slot (docs/design/semaphore.md §3
 * "SlotTally", "Splits across slots"): one lock tally per slot, and the rules of Lemma S1 (§2
 * "One round picks one slot") that keep each node counted on one slot at most. Pure logic: no
 * request, no clock of its own (every `now` is the caller's `performance.now()`).
 *
 * @module
 */

/**
 * A majority counted on one slot's tally: the lock's `Counting` (`src/lock/wait/tally.ts`).
 *
 * @example
 * const counting: SlotCounting = { validUntil: t0 + 9_900, fence: 0, nodes: [0, 2] };
 */
export interface SlotCounting {
  /** The Q-th latest bound: a majority keeps the token on the slot at least until then. */
  readonly validUntil: number;
  /** The highest fence a counted node issued (0: permits carry no fence in v1). */
  readonly fence: number;
  /** The nodes counted, by index. */
  readonly nodes: readonly number[];
}

/**
 * One slot's count: the shape of the lock's `Tally` (`src/lock/wait/tally.ts`), which the
 * semaphore passes for every slot unchanged. It is taken as a factory, not imported: `friends.ts`
 * offers `Tally`, but this room may import the lock room only once the semaphore's rounds are
 * built (ARCHITECTURE.md's table); and a test can pass a pooled count (design §5).
 *
 * @example
 * const counter: (slot: number) => SlotCounter = () => new Tally(quorum, minValidity, driftFactor);
 */
export interface SlotCounter {
  placed(index: number, by: { look: number; start: number; ttl: number; fence: number }): void;
  handed(
    index: number,
    by: { look: number; start: number; gap: number; handMs: number; fence: number },
  ): void;
  lost(index: number, look: number): void;
  passed(look: number): void;
  holding(now: number): number[];
  decide(now: number): SlotCounting | undefined;
}

/**
 * A permit decided: the slot whose majority was counted, and that count.
 *
 * @example
 * const decided: SlotDecision = { slot: 1, validUntil: t0 + 9_900, fence: 0, nodes: [0, 2] };
 */
export interface SlotDecision extends SlotCounting {
  /** The slot index (as in `S:permit:<slot>`). */
  readonly slot: number;
}

/**
 * A pass to send (design §3c): `keep` undefined passes every slot (a caller before us holds the
 * target where we lack it: P4); a slot number keeps that slot and passes the others (a split
 * across slots). `nodes`: where to send it.
 *
 * @example
 * const pass: SlotPass = { keep: 1, nodes: [2] }; // SEM_PASS(t, k, keep = 1) to node 2 only
 */
export interface SlotPass {
  readonly keep: number | undefined;
  readonly nodes: readonly number[];
}

/** The newest evidence a node gave of our token: the slot it named, its look, and how. */
interface Seen {
  readonly slot: number;
  readonly look: number;
  /** A hand-off message (true) or a look's answer (false). */
  readonly handed: boolean;
}

/**
 * A permit call's count of its token on the nodes, one lock tally per slot (design §3b). A node
 * holds our token on one slot at most at any moment (Lemma S1), so each node is counted on one
 * slot at most: evidence naming slot j for node X removes X from every other slot's tally, and
 * evidence of an older look than X's newest on another slot is ignored (it speaks of a past the
 * newer one replaced). Every bound stays a sound lower bound either way; the rule is what makes
 * the decision unique (two slots cannot both have Q of N distinct nodes) and keeps a holder to
 * one permit.
 *
 * @example
 * const tally = new SlotTally([2, 0, 1], () => new Tally(quorum, minValidity, driftFactor));
 * tally.placed(0, 2, { look: 1, start: t0, ttl: 10_000, fence: 0 });
 * tally.handed(1, 2, { look: 1, start: t0, gap: 240, handMs: 1_000, fence: 0 });
 * tally.decide(performance.now()); // { slot: 2, validUntil, fence: 0, nodes: [0, 1] } or undefined
 */
export class SlotTally {
  /** The call's order of slots (its rotation): `decide` and `target` prefer the earliest. */
  readonly #order: readonly number[];
  readonly #tallies = new Map<number, SlotCounter>();
  /** Per slot: evidence of looks below this is not counted (the last pass that touched it). */
  readonly #from = new Map<number, number>();
  /** Per node: the evidence it is counted by (at most one slot, S1). */
  readonly #seen = new Map<number, Seen>();

  /**
   * @param order the slots in the call's order, each once
   * @param counter a fresh count for one slot (the lock's `Tally`)
   * @example
   * new SlotTally([1, 2, 0], () => new Tally(2, 10, 0.01));
   */
  constructor(order: readonly number[], counter: (slot: number) => SlotCounter) {
    // A slot listed twice would have two tallies by one name: the uniqueness argument needs one.
    if (order.length === 0 || new Set(order).size !== order.length) {
      throw new RangeError(`SlotTally: the call's order must list each slot once: [${order}]`);
    }
    this.#order = [...order];
    for (const slot of order) this.#tallies.set(slot, counter(slot));
  }

  /**
   * Node `index` answered look `by.look` naming `slot` (found or placed, P1/P2).
   *
   * @example
   * tally.placed(0, 2, { look: 1, start: t0, ttl: 10_000, fence: 0 });
   */
  placed(
    index: number,
    slot: number,
    by: { look: number; start: number; ttl: number; fence: number },
  ): void {
    if (this.#take(index, { slot, look: by.look, handed: false })) {
      this.#tallies.get(slot)?.placed(index, by);
    }
  }

  /**
   * Node `index` handed us `slot` (P3): its message names look `by.look`, started at `by.start`.
   *
   * @example
   * tally.handed(1, 0, { look: 2, start: t2, gap: 240, handMs: 1_000, fence: 0 });
   */
  handed(
    index: number,
    slot: number,
    by: { look: number; start: number; gap: number; handMs: number; fence: number },
  ): void {
    if (this.#take(index, { slot, look: by.look, handed: true })) {
      this.#tallies.get(slot)?.handed(index, by);
    }
  }

  /**
   * Node `index` refused look `look`: our token was on no slot there when that request ran, so
   * every slot forgets what earlier looks counted for the node (the lock's rule, per slot).
   *
   * @example
   * tally.lost(2, 3);
   */
  lost(index: number, look: number): void {
    for (const tally of this.#tallies.values()) tally.lost(index, look);
    const seen = this.#seen.get(index);
    if (seen !== undefined && seen.look < look) this.#seen.delete(index);
  }

  /**
   * A pass numbered `look` was sent, keeping slot `keep` (or none): every other slot forgets
   * what it counted and counts only looks from `look` on. The kept slot is untouched, because
   * SEM_PASS never removes the token from it (P4 for the others).
   *
   * @example
   * tally.passed(5, 2); // SEM_PASS(t, 5, keep = 2)
   * tally.passed(6);    // SEM_PASS(t, 6, keep = none)
   */
  passed(look: number, keep?: number): void {
    for (const [slot, tally] of this.#tallies) {
      if (slot === keep) continue;
      tally.passed(look);
      this.#from.set(slot, Math.max(this.#from.get(slot) ?? 0, look));
    }
    for (const [index, seen] of this.#seen) if (seen.slot !== keep) this.#seen.delete(index);
  }

  /**
   * The nodes counted on some slot with a bound still ahead of `now` (each once, by S1).
   *
   * @example
   * tally.holding(performance.now()).length > 0; // some nodes, maybe no majority
   */
  holding(now: number): number[] {
    return this.#order.flatMap((slot) => this.#tally(slot).holding(now));
  }

  /**
   * The slot whose tally counts a majority with `minValidity` left at `now`, or `undefined`.
   * The first in the call's order is taken, though by the S1 rule at most one can decide.
   *
   * @example
   * const permit = tally.decide(performance.now()); // { slot, validUntil, fence, nodes }
   */
  decide(now: number): SlotDecision | undefined {
    for (const slot of this.#order) {
      const counting = this.#tally(slot).decide(now);
      if (counting !== undefined) return { slot, ...counting };
    }
    return undefined;
  }

  /**
   * The slot to consolidate on (design §3c): the one with the most nodes counted at `now`, ties
   * to the earliest in the call's order, so that every look of the call aims at the same slot.
   *
   * @example
   * tally.target(performance.now()); // a consolidating look puts this slot first, eligible = 1
   */
  target(now: number): number {
    let best = this.#order[0] as number;
    let most = -1;
    for (const slot of this.#order) {
      const count = this.#tally(slot).holding(now).length;
      // Strictly more: an equal count later in the order never displaces an earlier slot.
      if (count > most) [best, most] = [slot, count];
    }
    return best;
  }

  /**
   * After a consolidating look on `target` counted no majority (design §3c): pass every slot on
   * every node when `behind` (a caller before us in the queue order holds the target on a node
   * we lack), else keep the target and pass the other slots on every node not counted for it
   * when we hold other slots somewhere, else nothing (look again: the split is on the target
   * alone and the others give way).
   *
   * @param nodes every node's index
   * @example
   * const pass = tally.passFor(2, performance.now(), behind, [0, 1, 2]);
   * if (pass) { tally.passed(++looks, pass.keep); sendSemPass(pass); }
   */
  passFor(
    target: number,
    now: number,
    behind: boolean,
    nodes: readonly number[],
  ): SlotPass | undefined {
    if (behind) return { keep: undefined, nodes: [...nodes] };
    const elsewhere = this.#order.some(
      (s) => s !== target && this.#tally(s).holding(now).length > 0,
    );
    if (!elsewhere) return undefined;
    const counted = new Set(this.#tally(target).holding(now));
    return { keep: target, nodes: nodes.filter((index) => !counted.has(index)) };
  }

  #tally(slot: number): SlotCounter {
    return this.#tallies.get(slot) as SlotCounter;
  }

  /**
   * Whether evidence `next` for node `index` counts; if it does, the node is removed from every
   * other slot first, so it is counted on `next.slot` alone.
   */
  #take(index: number, next: Seen): boolean {
    // A slot outside the call's order: the room never hands a call a slot its looks do not scan
    // (the caller's P is in its record), and a slot we do not know cannot be granted anyway.
    if (!this.#tallies.has(next.slot)) return false;
    // After a pass that touched this slot, older looks' evidence is void there (the lock's rule).
    if (next.look < (this.#from.get(next.slot) ?? 0)) return false;
    const seen = this.#seen.get(index);
    if (seen !== undefined && seen.slot !== next.slot && !newer(next, seen)) return false;
    if (seen === undefined || seen.slot !== next.slot || newer(next, seen)) {
      this.#seen.set(index, next);
    }
    // Infinity forgets whatever look the node was counted by there: the token left that slot.
    for (const [slot, tally] of this.#tallies) {
      if (slot !== next.slot) tally.lost(index, Number.POSITIVE_INFINITY);
    }
    return true;
  }
}

/**
 * Whether evidence `a` is newer than `b` for one node. A later look is newer. At one look, a
 * hand-off is newer than an answer: a hand-off naming look i ran after look i registered on the
 * node, i.e. after a copy of look i's request found our token on no slot, so after any copy that
 * found it on one. Two of one kind at one look (duplicated requests) cannot be ordered: the later
 * arrival wins, and S1 needs only that one of them is kept.
 */
function newer(a: Seen, b: Seen): boolean {
  if (a.look !== b.look) return a.look > b.look;
  return a.handed || !b.handed;
}
