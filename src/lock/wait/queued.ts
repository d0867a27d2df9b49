import type { LockError, NodeOutcome } from "../../errors";
import type { LockCore } from "../core";
import { settledFailure } from "../failure";
import type { ResolvedCall } from "../options";
import type { RoundTerms } from "../spec";
import type { QueueActs, QueuePass, QueueRequest, QueueRound, QueueSide } from "./side";
import type { Handoff } from "./streams";
import type { Counting } from "./tally";
import { afterAttempts } from "./tried";

/** Stalls a waiter makes without news (see `QueuedWait.#stalls`). */
const STALLS_WITHOUT_NEWS = 2;

/** What a queued wait needs of its call (all times on the `performance.now()` clock). */
export interface QueuePlan {
  /** The lock's name (or the semaphore's): what its events and failures name. */
  readonly key: string;
  /** The call's place in the queues: epoch ms of its call, the same on every node. */
  readonly place: number;
  /** The call's one token (docs/SAFETY.md §2 P1). */
  readonly token: string;
  /** No look starts after this. */
  readonly waitUntil: number;
  /** Sizes the next look now (its TTL and request timeout; the token is the call's), or why not. */
  readonly size: () => RoundTerms | LockError;
  /** When the call began (`performance.now()`), and how many looks it made before it queued. */
  readonly began: number;
  readonly looked: number;
  /** Told each look's outcomes once it is decided (what callers waiting behind this one report). */
  readonly seen: (outcomes: readonly NodeOutcome[]) => void;
  /** The failure to report when the budget cannot cover a look before this wait's first. */
  readonly short: (shortfall: LockError) => LockError;
}

/**
 * A majority counted (the side's decision `C`), with the last look's outcomes (what the `Lock`
 * reports).
 */
export type Queued<C extends Counting = Counting> = C & {
  readonly outcomes: readonly NodeOutcome[];
  /** The TTL and request timeout of the call's last look. */
  readonly terms: RoundTerms;
  /** Looks and passes sent (for the failure message of a later give-up). */
  readonly looks: number;
};

/**
 * The hand-off TTL for a look of lease `ttl` and request timeout `timeoutMs`: long enough for the
 * message, the count and the first extension (a few round trips), at most the lease, and short,
 * so that a waiter that froze with its streams open idles the key no longer than this (plus a
 * refresh) on each node (docs/SAFETY.md §6 "The queue").
 *
 * @example handMsFor(10_000, 500) // 2000
 */
export function handMsFor(ttl: number, timeoutMs: number): number {
  return Math.max(1, Math.min(ttl, Math.max(1_000, 4 * timeoutMs)));
}

/**
 * A waiting call in the nodes' queues (docs/design/queue-handoff.md; docs/SAFETY.md §6 "The
 * queue"): it registers on every node with its one token and its place, listens for hand-offs on
 * every node's stream, and counts what the nodes place for it — a look's placements (P1, P2) and
 * hand-off messages (P3) — until a majority is counted with `minValidity` left. It sends nothing
 * while it waits but a refresh every `retryDelayMax` (which also finds a hand-off whose message
 * was lost: P2), or sooner when the holders of a majority expire, and what its side does when it
 * counted some nodes but no majority for `patience` (the lock: a look, or a pass (H5) when that
 * look showed an earlier-placed caller holding the nodes it lacks).
 *
 * This is the loop; what is the lock's (ACQUIRE looks, PASS, `Tally`, done markers, its
 * failures) is its {@link QueueSide}, `lockSide`, so that a semaphore's wait runs the same loop
 * with its own. It never decides a grant on its own: only the side's majority of bounds does,
 * each bound a lower bound on a node's expiry of the token (docs/SAFETY.md §2, P1–P4).
 *
 * @example
 * const wait = new QueuedWait(core, call, plan, lockSide(core, budget, plan));
 * const listening = core.streams.listen(core.nodes, keys[0].room, token, (i, h) => wait.handed(i, h));
 * try { const queued = await wait.run(); } finally { listening.close(); }
 */
export class QueuedWait<C extends Counting = Counting> implements QueueActs {
  /** The start of every look and pass, by number (`performance.now()`). */
  readonly #starts = new Map<number, number>();
  #looks = 0;
  #woken: (() => void) | undefined;
  #last: readonly NodeOutcome[] = [];
  /** The last look's round (its `settled` answers, for the failure a give-up reports). */
  #round: QueueRound | undefined;
  #terms: RoundTerms | undefined;
  /** When the next look is due (`performance.now()`). */
  #nextLook = performance.now();
  /** No grant is decided before a look numbered above this (see {@link postpone}). */
  #postponed = 0;
  /**
   * Stalls since the last refresh look. Two are enough for a side to look and then pass; a waiter
   * held back by live holders learns nothing from more, and one every `patience` would spend N
   * requests per 20 ms until they release (a Worker's 50 subrequests within a second). Hand-off
   * messages do not reset it: they are counted as they come, and a grant needs no stall, while
   * waiters of one instance that pass to each other would make each pass news for the other.
   * Then it waits for the refresh (docs/SAFETY.md §6 "The queue").
   */
  #stalls = 0;
  /** The next look was made due by a stall (`soon`), not by the refresh's clock. */
  #forced = false;

  constructor(
    private readonly core: LockCore,
    private readonly call: ResolvedCall,
    private readonly plan: QueuePlan,
    private readonly side: QueueSide<C>,
  ) {}

  /** A hand-off message for this call from node `index` (see `HandoffStreams.listen`). */
  handed(index: number, handoff: Handoff): void {
    const start = this.#starts.get(handoff.look);
    if (start === undefined) return;
    this.side.handed(index, { ...handoff, start });
    this.#woken?.();
  }

  /**
   * Wait in the queues until a majority is counted (resolves with it), or give up: the call's
   * signal's reason when aborted, else the last look's failure.
   */
  async run(): Promise<Queued<C>> {
    const { plan, side } = this;
    const { signal } = this.call;
    let partialSince: number | undefined;
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const now = performance.now();
      const counting = this.#looks <= this.#postponed ? undefined : side.decide(now);
      if (counting !== undefined) {
        const outcomes = this.#outcomes(counting);
        return { ...counting, outcomes, terms: this.#terms as RoundTerms, looks: this.#looks };
      }
      if (now >= plan.waitUntil || side.hopeless(this.#last)) {
        // The last look's failure once its pending nodes answered (a busy key, not an outage).
        const round = this.#round ?? { settled: Promise.resolve([]) };
        const last = { round, timeoutMs: this.#terms?.timeoutMs ?? 0 };
        throw await settledFailure(side.failure, last, this.#failure());
      }
      partialSince = side.holding(now) ? (partialSince ?? now) : undefined;
      const patience = this.#patience();
      // After two stalls, the next one waits for the refresh.
      const stalling = partialSince !== undefined && this.#stalls < STALLS_WITHOUT_NEWS;
      if (stalling && partialSince !== undefined && now - partialSince >= patience) {
        partialSince = now;
        this.#stalls++;
        const acting = side.stalled(this);
        if (acting) await acting;
      }
      if (now >= this.#nextLook) {
        // A refresh is news (what the holders and the queue look like now); a stall's look is not.
        if (!this.#forced) this.#stalls = 0;
        this.#forced = false;
        await this.#look();
        this.#due();
        continue;
      }
      const until = Math.min(
        this.#nextLook,
        plan.waitUntil,
        partialSince === undefined || !stalling ? Infinity : partialSince + patience,
      );
      await this.#sleep(until - now);
    }
  }

  /**
   * The majority counted could not be granted (its fence raise failed, or too little validity
   * was left after it): `outcomes` are what the caller reports if it gives up; decide again only
   * after the next look, which is due after `retryDelay`.
   */
  postpone(outcomes: readonly NodeOutcome[]): void {
    this.#last = outcomes;
    this.#postponed = this.#looks;
    this.#nextLook = performance.now() + this.core.options.retryDelay;
  }

  /** For the side's `stalled`: a look now, numbered, sized and registered as every look. */
  async look(): Promise<void> {
    await this.#look();
    this.#due();
  }

  /** For the side's `stalled`: a pass (H5) now, numbered and registered as a look. */
  async pass(send: QueuePass): Promise<void> {
    await send(this.#request(false));
  }

  /** For the side's `stalled`: make the next look due now (sent before the loop sleeps). */
  soon(): void {
    this.#nextLook = 0;
    this.#forced = true;
  }

  /** One look: the side's, with our registration on every node, each answer counted as it comes. */
  async #look(): Promise<void> {
    const { core, plan } = this;
    const request = this.#request(true);
    const round = await this.side.look(request, () => this.#woken?.());
    const { outcomes } = round;
    this.#last = outcomes;
    this.#round = round;
    plan.seen(outcomes);
    const durationMs = performance.now() - request.start;
    const result = outcomes.some((o) => o.status === "held" || o.status === "done")
      ? "busy"
      : "unavailable";
    const attempt = plan.looked + request.look - 1;
    core.emit({ type: "acquire", key: plan.key, attempt, result, durationMs, outcomes });
  }

  /**
   * After a look: the next refresh is due in `retryDelayMax`, or sooner when a majority's holders
   * expire: a holder that never releases (it crashed) frees the key without a script to hand it on.
   */
  #due(): void {
    this.#nextLook = Math.min(
      performance.now() + this.core.options.retryDelayMax,
      this.side.expiry() + 1,
    );
  }

  /**
   * The next request, numbered as a look, with its terms and registration (a look's terms are
   * the ones the grant reports). Out of budget, the call gives up as a wait does: with the last
   * look's failure (a busy key stays a `LockBusyError`), caused by the shortfall — before this
   * wait's first look, the acquire loop's last look's (`plan.short`).
   */
  #request(looking: boolean): QueueRequest {
    const { core, plan } = this;
    const sized = plan.size();
    if (sized instanceof Error) {
      throw this.#last.length === 0 ? plan.short(sized) : this.#failure(sized);
    }
    const look = ++this.#looks;
    const terms: RoundTerms = { token: plan.token, ttl: sized.ttl, timeoutMs: sized.timeoutMs };
    if (looking) this.#terms = terms;
    const start = performance.now();
    this.#starts.set(look, start);
    const waitMs = Math.max(1, Math.ceil(plan.waitUntil - performance.now()));
    const queue = {
      place: plan.place,
      look,
      listener: core.streams.id,
      waitMs,
      handMs: handMsFor(terms.ttl, terms.timeoutMs),
      roomMs: Math.max(terms.ttl, 2 * core.options.retryDelayMax, waitMs),
      fencing: core.options.fencing,
    };
    return { look, start, terms, queue };
  }

  /** How long some nodes without a majority may wait for the rest: the release is in flight. */
  #patience(): number {
    const slowest = Math.max(0, ...this.#last.map((o) => o.latencyMs ?? 0));
    return Math.max(20, Math.min(2 * slowest, this.#terms?.timeoutMs ?? 100));
  }

  /**
   * The last look's failure; after more than one look, it says how long and how often. `cause`:
   * why no further look was sent (a budget shortfall).
   */
  #failure(cause?: LockError): LockError {
    const { plan } = this;
    const error = this.side.failure(this.#last, cause);
    const looks = plan.looked + this.#looks;
    return looks > 1 ? afterAttempts(error, looks, performance.now() - plan.began) : error;
  }

  /** The outcomes a grant reports: counted nodes `ok`, the others as last seen. */
  #outcomes(counting: Counting): NodeOutcome[] {
    const counted = new Set(counting.nodes);
    return this.core.nodes.map(({ index, host }) =>
      counted.has(index)
        ? { index, host, status: "ok" }
        : (this.#last.find((o) => o.index === index) ?? { index, host, status: "pending" }),
    );
  }

  /** Sleep `ms`, or until a hand-off or an answer arrives, or the call is aborted. */
  #sleep(ms: number): Promise<void> {
    const { signal } = this.call;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.#woken = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener("abort", done);
      this.#woken = done;
    });
  }
}
