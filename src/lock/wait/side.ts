/**
 * The two halves of a queued wait (docs/design/semaphore.md §3 "Waiting: one fair queue for P
 * slots"). {@link QueuedWait} is the loop every kind of queued call shares: when to look, the
 * refresh every `retryDelayMax`, the look at the holders' expiry, patience with a partial count,
 * the give-up, `postpone`, the sleep until a hand-off or an answer. A {@link QueueSide} is what
 * one kind of call brings: how a look is sent and its answers counted, how a hand-off is counted,
 * what to do when patience runs out, and the failure to report. The lock's side is `lockSide`
 * (ACQUIRE looks, PASS, one `Tally`); the semaphore's sends SEM_ACQUIRE looks and counts a
 * `SlotTally`.
 *
 * Types only: nothing here is bundled.
 *
 * @module
 */
import type { LockError, NodeOutcome } from "../../errors";
import type { Round } from "../../quorum";
import type { QueueRegistration } from "../../scripts";
import type { RoundTerms } from "../spec";
import type { Handoff } from "./streams";
import type { Counting } from "./tally";

/**
 * One request of a queued wait as the loop numbered it: a look or a pass, with its number, its
 * start (`performance.now()`, the origin of every bound counted from it), its terms (the call's
 * token; TTL and request timeout sized now) and the registration it carries.
 *
 * @example
 * const request: QueueRequest = { look: 3, start: performance.now(), terms, queue };
 */
export interface QueueRequest {
  readonly look: number;
  readonly start: number;
  readonly terms: RoundTerms;
  readonly queue: QueueRegistration;
}

/**
 * What the loop keeps of a look's round: the outcomes when it was decided (reported, and what
 * `hopeless` and `failure` read) and the final ones once every node answered (a give-up waits
 * for them: `settledFailure`).
 *
 * @example
 * const round: QueueRound = await core.acquireRound(spec, undefined, count);
 */
export type QueueRound = Pick<Round<unknown>, "outcomes" | "settled">;

/**
 * Sends a pass numbered by the loop (see {@link QueueActs.pass}); the side forgets what the pass
 * gives up before it sends (P4: after pass k only evidence of looks k and later counts).
 *
 * @example
 * const pass: QueuePass = (r) => (tally.passed(r.look), core.passRound(spec(r), r.queue));
 */
export type QueuePass = (request: QueueRequest) => Promise<unknown>;

/**
 * What the loop offers a side whose patience ran out ({@link QueueSide.stalled}): the
 * `QueuedWait` itself. A look or a pass sent here is numbered, counted and reported like the
 * loop's own, and a hand-off naming its number is counted from its start.
 *
 * @example
 * stalled(acts) { return behind ? acts.pass(send) : acts.soon(); }
 */
export interface QueueActs {
  /** Send a look now, numbered, sized and registered as every look (the side picks its shape). */
  look(): Promise<void>;
  /** Send a pass now: numbered and registered as a look, sent by `send`. */
  pass(send: QueuePass): Promise<void>;
  /** Make the next look due now: the loop sends it before it sleeps again. */
  soon(): void;
}

/**
 * What one kind of queued call brings to the shared loop ({@link QueuedWait}): its requests, its
 * count and its failures. `C` is what its count decides: the lock's `Counting`, or a slot and a
 * `Counting` for a permit. Every `now` is the loop's `performance.now()`.
 *
 * @example
 * const wait = new QueuedWait(core, call, plan, lockSide(core, budget, plan));
 */
export interface QueueSide<C extends Counting> {
  /**
   * Send look `request` to the nodes, counting each answer as it comes (also after the round is
   * decided) and calling `heard` after each, which wakes the loop. Resolves once it is decided.
   */
  look(request: QueueRequest, heard: () => void): Promise<QueueRound>;
  /** Node `index` handed us the key: a message naming one of our looks, which began at `start`. */
  handed(index: number, handoff: Handoff & { readonly start: number }): void;
  /**
   * Patience ran out: some nodes are counted and none decides. Pass, look, or make a look due
   * (`acts`); a promise is awaited, and then the loop goes on with its clock reading from
   * before (it looks if one is due by then, else sleeps for the next look, a patience, or an
   * answer or hand-off). The lock passes when behind, else makes a look due; a permit call
   * sends a consolidating look and then the pass its split needs.
   */
  stalled(acts: QueueActs): Promise<void> | void;
  /** Whether some node is counted with a bound still ahead of `now` (patience starts then). */
  holding(now: number): boolean;
  /** A grant: a majority counted with `minValidity` left at `now`, and nothing forbids it. */
  decide(now: number): C | undefined;
  /** When the holders of a majority of nodes expire, as last seen (`Infinity`: never, unknown). */
  expiry(): number;
  /** No wait can succeed after the last look's `outcomes`: the call gives up at once. */
  hopeless(outcomes: readonly NodeOutcome[]): boolean;
  /**
   * The failure a look with `outcomes` reports; `cause`: why no further look was sent. A function
   * the loop may call on its own (not a method that reads `this`): `settledFailure` is given it.
   */
  readonly failure: (outcomes: readonly NodeOutcome[], cause?: unknown) => LockError;
}
