import type { LockError, NodeOutcome } from "../../errors";
import type { NodeAnswer, Round } from "../../quorum";
import type { QueueRegistration } from "../../scripts";
import type { LockCore } from "../core";
import { failureOf, settledFailure, tokensRuleOutMajority } from "../failure";
import type { ResolvedCall } from "../options";
import type { Keys, RoundSpec, RoundTerms } from "../spec";
import type { Handoff } from "./streams";
import { type Counting, Tally } from "./tally";
import { afterAttempts } from "./tried";

/** What a queued wait needs of its call (all times on the `performance.now()` clock). */
export interface QueuePlan {
  /** The lock's name. */
  readonly key: string;
  readonly keys: Keys;
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

/** A majority counted, with the last look's outcomes (what the `Lock` reports). */
export interface Queued extends Counting {
  readonly outcomes: readonly NodeOutcome[];
  /** The TTL and request timeout of the call's last look. */
  readonly terms: RoundTerms;
  /** Looks and passes sent (for the failure message of a later give-up). */
  readonly looks: number;
}

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
 * hand-off messages (P3) — in a {@link Tally}, until a majority is counted with `minValidity` left.
 * It sends nothing while it waits but a refresh every `retryDelayMax` (which also finds a hand-off
 * whose message was lost: P2), a look `patience` after it counted some nodes but no majority, and
 * a pass (H5) when that look shows an earlier-placed caller holding the nodes it lacks.
 *
 * It never decides a grant on its own: only the tally's majority of bounds does, each bound a
 * lower bound on a node's expiry of the token (docs/SAFETY.md §2, P1–P4).
 *
 * @example
 * const wait = new QueuedWait(core, call, plan);
 * const listening = core.streams.listen(core.nodes, keys[0].room, token, (i, h) => wait.handed(i, h));
 * try { const queued = await wait.run(); } finally { listening.close(); }
 */
export class QueuedWait {
  readonly #tally: Tally;
  /** The start of every look and pass, by number (`performance.now()`). */
  readonly #starts = new Map<number, number>();
  /** Per node: the place of the holder that refused our last look there (-1: unknown). */
  readonly #aheads = new Map<number, number>();
  /** Per node: when the holder that refused our last look there expires (`performance.now()`). */
  readonly #ends = new Map<number, number>();
  #looks = 0;
  #woken: (() => void) | undefined;
  #last: readonly NodeOutcome[] = [];
  /** The last look's round (its `settled` answers, for the failure a give-up reports). */
  #round: Round<number> | undefined;
  /** Per node: until when a done marker seen there stands (`performance.now()`; no grant before). */
  readonly #marked = new Map<number, number>();
  #terms: RoundTerms | undefined;
  /** When the next look is due (`performance.now()`). */
  #nextLook = performance.now();
  /** No grant is decided before a look numbered above this (see {@link postpone}). */
  #postponed = 0;

  constructor(
    private readonly core: LockCore,
    private readonly call: ResolvedCall,
    private readonly plan: QueuePlan,
  ) {
    const { quorum, options } = core;
    this.#tally = new Tally(quorum, options.minValidity, options.driftFactor);
  }

  /** A hand-off message for this call from node `index` (see `HandoffStreams.listen`). */
  handed(index: number, handoff: Handoff): void {
    const start = this.#starts.get(handoff.look);
    if (start === undefined) return;
    this.#tally.handed(index, { ...handoff, start });
    this.#woken?.();
  }

  /**
   * Wait in the queues until a majority is counted (resolves with it), or give up: the call's
   * signal's reason when aborted, else the last look's failure.
   */
  async run(): Promise<Queued> {
    const { core, call, plan } = this;
    const { signal } = call;
    const { retryDelayMax } = core.options;
    let partialSince: number | undefined;
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const now = performance.now();
      const blocked = this.#marker(now) || this.#looks <= this.#postponed;
      const counting = blocked ? undefined : this.#tally.decide(now);
      if (counting !== undefined) {
        const terms = this.#terms as RoundTerms;
        return { ...counting, outcomes: this.#outcomes(counting), terms, looks: this.#looks };
      }
      if (now >= plan.waitUntil || this.#hopeless()) {
        // The last look's failure once its pending nodes answered (a busy key, not an outage).
        const round = this.#round ?? { settled: Promise.resolve([]) };
        const last = { round, timeoutMs: this.#terms?.timeoutMs ?? 0 };
        throw await settledFailure(core, plan.key, last, this.#failure());
      }
      const holding = this.#tally.holding(now).length > 0;
      partialSince = holding ? (partialSince ?? now) : undefined;
      const patience = this.#patience();
      if (partialSince !== undefined && now - partialSince >= patience) {
        partialSince = now;
        if (this.#behind()) await this.#pass();
        else this.#nextLook = now;
      }
      if (now >= this.#nextLook) {
        await this.#look();
        // The next refresh, or sooner when a majority's holders expire: a holder that never
        // releases (it crashed) frees the key without a script to hand it on.
        this.#nextLook = Math.min(performance.now() + retryDelayMax, this.#expiry() + 1);
        continue;
      }
      const until = Math.min(
        this.#nextLook,
        plan.waitUntil,
        partialSince === undefined ? Number.POSITIVE_INFINITY : partialSince + patience,
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

  /** One look: ACQUIRE with our registration on every node, each answer counted as it comes. */
  async #look(): Promise<void> {
    const { core, plan } = this;
    const sized = this.#sized();
    const look = ++this.#looks;
    const terms: RoundTerms = { token: plan.token, ttl: sized.ttl, timeoutMs: sized.timeoutMs };
    this.#terms = terms;
    const start = performance.now();
    this.#starts.set(look, start);
    const spec: RoundSpec = { keys: plan.keys, ...terms, budget: this.call.budget };
    const waiter = this.#registration(look, terms);
    const round = await core.acquireRound({ ...spec, queue: waiter }, undefined, (index, a) =>
      this.#answered(index, a, { look, start, ttl: terms.ttl }),
    );
    this.#last = round.outcomes;
    this.#round = round;
    plan.seen(round.outcomes);
    const { outcomes } = round;
    const durationMs = performance.now() - start;
    const result = outcomes.some((o) => o.status === "held" || o.status === "done")
      ? "busy"
      : "unavailable";
    const attempt = plan.looked + look - 1;
    core.emit({ type: "acquire", key: plan.key, attempt, result, durationMs, outcomes });
  }

  #answered(
    index: number,
    answer: NodeAnswer<number>,
    by: { look: number; start: number; ttl: number },
  ): void {
    this.#marked.delete(index);
    if (answer.status === "ok") {
      this.#tally.placed(index, { ...by, fence: answer.fence ?? 0 });
      this.#aheads.delete(index);
      this.#ends.delete(index);
    } else if (answer.status === "done") {
      const pttl = answer.pttl ?? -1;
      this.#marked.set(index, pttl < 0 ? Number.POSITIVE_INFINITY : by.start + pttl);
    } else if (answer.status === "held") {
      this.#tally.lost(index, by.look);
      this.#aheads.set(index, answer.ahead ?? -1);
      const pttl = answer.pttl ?? -1;
      if (pttl >= 0) this.#ends.set(index, by.start + pttl);
      else this.#ends.delete(index);
    }
    this.#woken?.();
  }

  /** The pass (H5): give up what we hold, register again under a fresh look number. */
  async #pass(): Promise<void> {
    const { core, plan } = this;
    const sized = this.#sized();
    const look = ++this.#looks;
    this.#starts.set(look, performance.now());
    this.#tally.passed(look);
    const terms: RoundTerms = { token: plan.token, ttl: sized.ttl, timeoutMs: sized.timeoutMs };
    const spec: RoundSpec = { keys: plan.keys, ...terms, budget: this.call.budget };
    await core.passRound(spec, this.#registration(look, terms));
  }

  /**
   * The next look's terms. Out of budget, the call gives up as a wait does: with the last look's
   * failure (a busy key stays a `LockBusyError`), caused by the shortfall — before this wait's
   * first look, the acquire loop's last look's (`plan.short`).
   */
  #sized(): RoundTerms {
    const sized = this.plan.size();
    if (!(sized instanceof Error)) return sized;
    throw this.#last.length === 0 ? this.plan.short(sized) : this.#failure(sized);
  }

  /** When the holders of a majority of nodes expire, as last seen (never: `Infinity`). */
  #expiry(): number {
    const ends = [...this.#ends.values()].sort((a, b) => a - b);
    return ends[this.core.quorum - 1] ?? Number.POSITIVE_INFINITY;
  }

  /**
   * A caller before us in the queue's order holds a node we lack: we are the one to give way.
   * The node compares (place, token) and reports the holder's place only then (ACQUIRE): callers
   * that started in the same millisecond (the callers of one instance in a burst) have one place,
   * and comparing places alone left each of a split's holders waiting for the others to pass.
   */
  #behind(): boolean {
    return [...this.#aheads.values()].some((place) => place >= 0);
  }

  #registration(look: number, terms: RoundTerms): QueueRegistration {
    const { core, plan } = this;
    const waitMs = Math.max(1, Math.ceil(plan.waitUntil - performance.now()));
    const roomMs = Math.max(terms.ttl, 2 * core.options.retryDelayMax, waitMs);
    return {
      place: plan.place,
      look,
      listener: core.streams.id,
      waitMs,
      handMs: handMsFor(terms.ttl, terms.timeoutMs),
      roomMs,
      fencing: core.options.fencing,
    };
  }

  /** How long some nodes without a majority may wait for the rest: the release is in flight. */
  #patience(): number {
    const slowest = Math.max(0, ...this.#last.map((o) => o.latencyMs ?? 0));
    return Math.max(20, Math.min(2 * slowest, this.#terms?.timeoutMs ?? 100));
  }

  /** A done marker seen on some node still stands: the job of this key finished, never grant. */
  #marker(now: number): boolean {
    return [...this.#marked.values()].some((until) => until > now);
  }

  #hopeless(): boolean {
    if (tokensRuleOutMajority(this.core, this.#last)) return true;
    // A done marker is never released early: waiting helps only if it expires within the wait.
    return [...this.#marked.values()].some((until) => until > this.plan.waitUntil);
  }

  /**
   * The last look's failure; after more than one look, it says how long and how often. `cause`:
   * why no further look was sent (a budget shortfall).
   */
  #failure(cause?: LockError): LockError {
    const { core, plan } = this;
    const error = failureOf(core, plan.key, { outcomes: this.#last, why: undefined }, cause);
    const looks = plan.looked + this.#looks;
    return looks > 1 ? afterAttempts(error, looks, performance.now() - plan.began) : error;
  }

  /** The outcomes a `Lock` reports: counted nodes `ok`, the others as last seen. */
  #outcomes(counting: Counting): NodeOutcome[] {
    const counted = new Set(counting.nodes);
    return this.core.nodes.map((node) => {
      const seen = this.#last.find((o) => o.index === node.index);
      if (counted.has(node.index)) return { index: node.index, host: node.host, status: "ok" };
      return seen ?? { index: node.index, host: node.host, status: "pending" };
    });
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
