import type { NodeOutcome } from "../../errors";
import type { Round } from "../../quorum";
import type { RoomEntry, RoomRegistration } from "../../scripts";

/**
 * Waiting strategy 1, the local line: the callers of one `Locks` instance waiting for one key,
 * in the order of their wait room places. Keeps docs/SAFETY.md §6 "The local line keeps the
 * room's order" and §6 "Backstop" ({@link HANDOVER_RUN_MAX}). It decides only who of this
 * instance's callers asks the nodes next, never what a grant needs, so §2–§5 are untouched.
 *
 * @module
 */

/** A place in a {@link LocalLine}, kept by the caller that waits in it. */
export interface LineSpot {
  /** Set while its caller waits for a change (see {@link LocalLine.changed}). */
  notify?: (() => void) | undefined;
  /** Last sign of life of its caller (`performance.now()`). */
  seen: number;
  /** How long its caller may go without a sign of life while it is first (a look's worst case). */
  readonly patience: number;
  /** Removed by others: its caller looked gone. It joins again (at its place) if it was not. */
  evicted: boolean;
  /** Its caller's place in the key's wait room on the nodes (epoch ms of its call), if any. */
  readonly place?: number | undefined;
}

/**
 * Longest run of consecutive handovers within one instance: the next release after it goes to the
 * nodes (serving their wait rooms) instead of straight to the next local caller. A backstop for
 * fairness towards waiters the room does not know (their registration failed); the room already
 * serves the others in order (docs/SAFETY.md §6, "Backstop").
 */
export const HANDOVER_RUN_MAX = 8;

/** A grant of this key held here: ended once, renewed by each extension. */
export interface LocalHold {
  end(): void;
  renew(validUntil: number): void;
}

/**
 * The round a handover would run for the first waiter: its fresh token, TTL and timeout, and its
 * wait room registration, which the grant removes from the room.
 */
export interface NextRound {
  readonly token: string;
  readonly ttl: number;
  readonly timeoutMs: number;
  /** ACQUIRE's wait room registration (see `RoomSeat.registration`), if any. */
  readonly waiter?: RoomRegistration | undefined;
  /** The next holder's room entry and place, for HANDOVER to serve earlier waiters first. */
  readonly entry?: RoomEntry | undefined;
}

/**
 * The first waiter's standing offer to take the lock over directly from the grant held here: the
 * release then also acquires for it, in one request per node (see `handoverRound`).
 */
export interface Offer {
  /** Sized at handover time; `undefined` when the waiter cannot afford a round now. */
  readonly next: () => NextRound | undefined;
  /** The handover started: its acquire round is the waiter's next look. */
  readonly accept: (round: Promise<Round<number>>) => void;
}

/** What the first waiter saw last time the lock was busy, for waiters that give up unheard. */
export interface LastLook {
  readonly outcomes: readonly NodeOutcome[];
  readonly why: string | undefined;
}

/**
 * The callers of one `Locks` instance (one isolate or process) that want the same key: the grants
 * it holds and the waiters, first come, first served. Only the first waiter looks at the nodes,
 * and only while none of these grants is held: a grant held here is known to be busy, and it
 * wakes the first waiter the moment it ends (release, completion, loss), so the lock passes to
 * the next local caller without a poll or a sleep in between. Grants still need a majority round
 * on the nodes: this line only decides who of the local callers asks next.
 *
 * Nothing here waits on a caller that may be gone (on Workers, a request whose context ended runs
 * none of its timers or continuations): a grant stops counting as held at the end of its validity
 * even if nobody ended it, and a first waiter that shows no sign of life for its `patience` while
 * free to go is dropped from the line by the next waiter that wakes up.
 *
 * @example
 * const line = new LocalLine(() => {});
 * const hold = line.hold(performance.now() + 9_000); // a grant of this key
 * const spot = line.join(3_000);
 * hold.end(); // released: `spot` is first and nothing is held, so it may go
 */
export class LocalLine {
  readonly #holds = new Set<{ validUntil: number }>();
  readonly #waiters: LineSpot[] = [];
  #offer: { readonly spot: LineSpot; readonly offer: Offer } | undefined;
  /** Consecutive handovers so far (see {@link HANDOVER_RUN_MAX}). */
  #handedOn = 0;
  /** Since when the first waiter has been free to go (it became first, or nothing is held). */
  #freeSince = performance.now();
  /** The first waiter's most recent failed look at the nodes. */
  last: LastLook | undefined;

  /** `onIdle`: called whenever nothing is held and nobody waits (the owner may forget it). */
  constructor(private readonly onIdle: () => void) {}

  /** Grants of this key held here whose validity has not ended. */
  held(now = performance.now()): number {
    for (const hold of this.#holds) {
      if (hold.validUntil > now) continue;
      // Never ended (its caller may be gone): it stopped protecting anything at this moment.
      this.#holds.delete(hold);
      if (this.#holds.size > 0) continue;
      this.#freeSince = hold.validUntil;
      if (this.#waiters.length === 0) this.onIdle();
    }
    return this.#holds.size;
  }

  /** When the grants held here end at the latest (`performance.now()` clock), 0 when none. */
  heldUntil(now = performance.now()): number {
    let until = 0;
    if (this.held(now) > 0)
      for (const hold of this.#holds) until = Math.max(until, hold.validUntil);
    return until;
  }

  /** Nothing held and nobody waiting: a newcomer may go straight to the nodes. */
  get idle(): boolean {
    return this.#waiters.length === 0 && this.held() === 0;
  }

  /**
   * Settles at the next change that may concern `spot`: it is (or became) first in line and a
   * grant held here ended, or the waiter before it left. Only the first waiter is ever woken, so a
   * long line costs nothing per change. Never rejects; one wait per spot at a time.
   */
  changed(spot: LineSpot): Promise<void> {
    return new Promise<void>((resolve) => {
      spot.notify = resolve;
    });
  }

  /** The first waiter may have become free to go: wake it. */
  #firstFree(): void {
    this.#freeSince = performance.now();
    const first = this.#waiters[0];
    const notify = first?.notify;
    if (first !== undefined) first.notify = undefined;
    notify?.();
    if (this.idle) this.onIdle();
  }

  /** Count a grant of this key as held until `end()` or its validity end (renewed on extension). */
  hold(validUntil: number): LocalHold {
    const hold = { validUntil };
    this.#holds.add(hold);
    return {
      end: () => {
        if (this.#holds.delete(hold) && this.#holds.size === 0) this.#firstFree();
      },
      renew: (until) => {
        hold.validUntil = until;
      },
    };
  }

  /** Join the line at `place` (see {@link LineSpot}), behind every waiter placed no later. */
  join(patience: number, place?: number): LineSpot {
    const spot: LineSpot = { seen: performance.now(), patience, evicted: false, place };
    this.#enqueue(spot);
    return spot;
  }

  /** Back in the line after an eviction (a caller that was only slow). */
  rejoin(spot: LineSpot): void {
    if (!spot.evicted) return;
    spot.evicted = false;
    spot.seen = performance.now();
    this.#enqueue(spot);
  }

  /**
   * Waiters stand in the order of their wait room places, the order the nodes serve (ties and
   * spots without a place: in order of joining). A caller joins at its first refused look, and
   * looks answer in any order under latency: a line in joining order could lead with a later
   * place, and a release that serves the room "before our next caller" would then reserve the key
   * for one of our own callers further back, who does not look while it is not first — the key
   * stays idle until the reservation runs out (docs/SAFETY.md §6).
   */
  #enqueue(spot: LineSpot): void {
    const place = spot.place ?? Number.POSITIVE_INFINITY;
    let at = this.#waiters.length;
    while (at > 0 && (this.#waiters[at - 1]?.place ?? Number.POSITIVE_INFINITY) > place) at--;
    this.#waiters.splice(at, 0, spot);
    // A new first waiter has been free to go since it joined.
    if (at === 0) this.#freeSince = performance.now();
  }

  /** Leave the line (granted, gave up, or failed). */
  leave(spot: LineSpot): void {
    const at = this.#waiters.indexOf(spot);
    if (at < 0) return;
    this.#waiters.splice(at, 1);
    if (this.#offer?.spot === spot) this.#offer = undefined;
    if (at === 0) this.#firstFree();
    else if (this.idle) this.onIdle();
  }

  /** A sign of life of `spot`'s caller. */
  seen(spot: LineSpot): void {
    spot.seen = performance.now();
  }

  /**
   * Drop the first waiter if it is not `self` and its caller shows no sign of life for its
   * patience although it has been free to go (nothing held here) for that long.
   */
  prune(self: LineSpot, now = performance.now()): void {
    const first = this.#waiters[0];
    if (first === undefined || first === self || this.held(now) > 0) return;
    if (now - Math.max(first.seen, this.#freeSince) <= first.patience) return;
    first.evicted = true;
    this.leave(first);
  }

  /** `spot` is first in line (a grant may still be held here). */
  isFirst(spot: LineSpot): boolean {
    return this.#waiters[0] === spot;
  }

  /** Stand ready (first in line only) to take over from the grant held here. */
  offer(spot: LineSpot, offer: Offer): void {
    if (this.isFirst(spot)) this.#offer = { spot, offer };
  }

  /** Withdraw `spot`'s offer, if it is still standing (not taken). */
  withdraw(spot: LineSpot): void {
    if (this.#offer?.spot === spot) this.#offer = undefined;
  }

  /**
   * The first waiter's offer, removed from the line (for the grant that is ending); `undefined`
   * after {@link HANDOVER_RUN_MAX} consecutive handovers, which ends the run.
   */
  takeOffer(): Offer | undefined {
    const standing = this.#offer;
    this.#offer = undefined;
    const offer =
      standing !== undefined && this.isFirst(standing.spot) ? standing.offer : undefined;
    if (offer === undefined || this.#handedOn >= HANDOVER_RUN_MAX) {
      this.#handedOn = 0;
      return undefined;
    }
    this.#handedOn++;
    return offer;
  }

  /** The wait room place of the first waiter (who gets the key next from here), if any. */
  firstPlace(): number | undefined {
    return this.#waiters[0]?.place;
  }

  /** `spot` is first in line and no grant is held here: its turn to ask the nodes. */
  isTurn(spot: LineSpot, now = performance.now()): boolean {
    return this.#waiters[0] === spot && this.held(now) === 0;
  }
}

/**
 * The {@link LocalLine}s of one `Locks` instance, by line key (`LockCore.lineKey`: one per set of
 * lock keys); a line is dropped as soon as it is idle, so keys that were only ever locked
 * uncontended leave nothing behind.
 *
 * @example
 * const lines = new LocalLines();
 * const hold = lines.of('["lock:k"]').hold(validUntil);
 * hold.end(); // the line is idle again: dropped
 */
export class LocalLines {
  readonly #lines = new Map<string, LocalLine>();

  /**
   * The line of `lineKey`, created on first use. Call it when holding or joining, and keep the
   * line only while holding or waiting in it: an idle line is dropped.
   */
  of(lineKey: string): LocalLine {
    let line = this.#lines.get(lineKey);
    if (line === undefined) {
      const created = new LocalLine(() => {
        if (this.#lines.get(lineKey) === created) this.#lines.delete(lineKey);
      });
      this.#lines.set(lineKey, created);
      line = created;
    }
    return line;
  }

  /** The line of `lineKey` if there is one. */
  peek(lineKey: string): LocalLine | undefined {
    return this.#lines.get(lineKey);
  }

  /** Keys with a line now (for tests). */
  get size(): number {
    return this.#lines.size;
  }
}
