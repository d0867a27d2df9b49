import type { LockError } from "../../errors";
import type { Round } from "../../quorum";
import type { Verdict } from "../look";
import type { Keys, RoundSpec, RoundTerms } from "../spec";
import type { Refusal } from "./pacing";
import type { LastLook } from "./queue";
import type { HandedRound } from "./turn";

/**
 * How one acquire call waits for its lock: the one interface the acquire loop (`acquireLoop`,
 * `src/lock/acquire.ts`) talks to, so that each way of waiting is a unit of its own, checked
 * against docs/SAFETY.md §6 "Liveness and fairness" on its own. One waiter per call; the loop
 * asks it, in this order, at every look:
 *
 * 1. {@link turn}: wait for this caller's turn before looking (or get the look a release of this
 *    instance ran for it);
 * 2. {@link look}: look at the lock, the way this strategy looks (what the look carries, where
 *    it asks);
 * 3. {@link granted} or {@link refused}: what the judged look came to;
 * 4. {@link pause}: sleep before the next look;
 *
 * and {@link stop} once, however the call ends.
 *
 * A waiter decides only who asks the nodes when, and what a look registers: it never decides who
 * holds the lock. Every grant is an acquire round (one the loop ran, or one handed over by a
 * release) judged by `judge` (`src/lock/look.ts`), against docs/SAFETY.md §3 "acquire round,
 * probe" and §4 Theorem 1; so a new strategy keeps §2–§5 by construction and is checked against
 * §6 only. What stays with the loop for every strategy today: a fresh token per look
 * ({@link WaitPlan.size}), the judge, and the cleanup of a refused look's token (docs/SAFETY.md §3
 * "failed round").
 *
 * @example
 * const waiter: Waiter = combinedWaiter(core, call, plan);
 * const handed = await waiter.turn(tries.failure);
 * const round = await (handed?.round ?? waiter.look(spec));
 */
export interface Waiter {
  /**
   * Before a look: wait until this caller may ask the nodes. Resolves with the round a release of
   * this instance already ran as this caller's look (judge it like any other), or `undefined`:
   * look now. Throws when waiting ends without a turn: the call's `signal`'s reason when aborted,
   * else `failure()` (the last look's) or, for a caller that never looked, what it saw waiting.
   */
  turn(failure: () => LockError | undefined): Promise<HandedRound | undefined>;
  /**
   * Look at the lock with `spec` (its token, TTL and timeout): an acquire round (or a probe of
   * one node, `look` in `src/lock/look.ts`) carrying what this strategy registers on the nodes.
   */
  look(spec: RoundSpec): Promise<Round<number>>;
  /** The look `round`, run with `spec`, was judged granted. */
  granted(round: Round<number>, spec: RoundSpec): void;
  /** The look `round` was refused (or its caller gave up while it ran). */
  refused(round: Round<number>, verdict: Pick<Verdict, "busy" | "outcomes">): void;
  /**
   * After a refused look, sleep until the next one may help. Throws the `signal`'s reason when
   * aborted meanwhile.
   */
  pause(refused: Refused): Promise<void>;
  /** The call ended (granted, gave up, failed, aborted): leave whatever it waits in. Once. */
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
