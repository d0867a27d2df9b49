import type { LockError, NodeOutcome } from "../../errors";
import type { Round } from "../../quorum";
import type { Keys, RoundSpec, RoundTerms } from "../spec";
import type { Refusal } from "./pacing";
import type { LastLook } from "./queue";
import type { HandedRound } from "./turn";

/**
 * How one acquire call waits for its lock: the one interface the acquire loop (`acquireLoop`,
 * `src/lock/acquire.ts`) talks to, so that each way of waiting is a unit of its own, checked
 * against docs/SAFETY.md §6 "Liveness and fairness" on its own. One waiter per call; the loop
 * asks it, in this order:
 *
 * 1. {@link turn}: wait for this caller's turn among the callers of its `Locks` instance (or get
 *    the look a release of this instance ran for it);
 * 2. if the call {@link queues}, it then waits in the nodes' queues (`queued.ts`) until a grant or
 *    the end of its wait; otherwise it polls: {@link look}, and after a refused look
 *    {@link pause} before the next;
 *
 * and {@link stop} once, however the call ends.
 *
 * A waiter decides only who asks the nodes when: it never decides who holds the lock. A poller's
 * grant is an acquire round (its look, or one a release handed over) judged by `judge`
 * (`src/lock/look.ts`); a queued call's grant is a majority of placements counted by its `Tally`
 * (docs/SAFETY.md §2, P1–P4). So a strategy is checked against §6 only.
 *
 * @example
 * const waiter: Waiter = combinedWaiter(core, call, plan);
 * const handed = await waiter.turn(tries.failure);
 * const round = await (handed?.round ?? waiter.look(spec));
 */
export interface Waiter {
  /** Epoch ms of the call: its place in the line and in the nodes' queues. */
  readonly place: number;
  /**
   * The call waits in the nodes' queues (one key, a wait, every node can stream): after its turn
   * it counts hand-offs instead of polling.
   */
  readonly queues: boolean;
  /**
   * Before a look: wait until this caller may ask the nodes. Resolves with the round a release of
   * this instance already ran as this caller's look (judge it like any other), or `undefined`:
   * look now. Throws when waiting ends without a turn: the call's `signal`'s reason when aborted,
   * else `failure()` (the last look's) or, for a caller that never looked, what it saw waiting.
   */
  turn(failure: () => LockError | undefined): Promise<HandedRound | undefined>;
  /**
   * Stand first in the local line while this call waits in the nodes' queues: the instance's
   * other callers for the key wait behind it. Returns what to call at each look (a sign of life,
   * so that they do not take it for gone; with the look's outcomes, what they report if they give
   * up unheard).
   */
  stand(): (outcomes?: readonly NodeOutcome[]) => void;
  /** Look at the lock with `spec`: an acquire round (or a probe of one node, `look.ts`). */
  look(spec: RoundSpec): Promise<Round<number>>;
  /**
   * After a refused look, sleep until the next one may help. Throws the `signal`'s reason when
   * aborted meanwhile.
   */
  pause(refused: Refused): Promise<void>;
  /** The call ended (granted, gave up, failed, aborted): leave the line. Once. */
  stop(): void;
}

/** A refused look, for {@link Waiter.pause}: the refusal, and the cluster as last seen whole. */
export interface Refused extends Refusal {
  /** What callers waiting behind this one report if they give up unheard (not a probe's node). */
  readonly last: LastLook;
}

/** What a waiter needs to know of its call (all times on the `performance.now()` clock). */
export interface WaitPlan {
  /** The lock's name (its key, or its keys joined). */
  readonly key: string;
  readonly keys: Keys;
  /** When the call began. */
  readonly began: number;
  /** No look starts after this (`began` + the call's `wait`). */
  readonly waitUntil: number;
  /** Subrequests a look must leave over: a round and the release. */
  readonly spare: number;
  /** Sizes the caller's next round now: its terms, or why the budget cannot cover it. */
  readonly size: () => RoundTerms | LockError;
}
