import type { LockError } from "../../errors";
import type { Round } from "../../quorum";
import type { RoomRegistration } from "../../scripts";
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
 * 2. {@link registration} and {@link probeAt}: what the look carries and where it asks;
 * 3. {@link granted} or {@link refused}: what the judged look came to;
 * 4. {@link pause}: sleep before the next look;
 *
 * and {@link stop} once, however the call ends.
 *
 * A waiter decides only who asks the nodes when, and what a look registers: it never decides who
 * holds the lock. Every grant is an acquire round (one the loop ran, or one handed over by a
 * release) judged by `judge` (`src/lock/look.ts`), against docs/SAFETY.md §3 "acquire round,
 * probe" and §4 Theorem 1; so a new strategy keeps §2–§5 by construction and is checked against
 * §6 only.
 *
 * @example
 * const waiter: Waiter = new CombinedWaiter(core, call, plan);
 * const turn = await waiter.turn();
 * const round = await look(core, { ...spec, waiter: waiter.registration }, waiter.probeAt);
 */
export interface Waiter {
  /**
   * Before a look: wait until this caller may ask the nodes. `true`: look now; a handed round: a
   * release of this instance already ran this caller's look (judge it like any other); `false`:
   * waiting ended (out of time) without a turn and without a look of its own. Throws the call's
   * `signal`'s reason when aborted while waiting.
   */
  turn(): Promise<HandedRound | boolean>;
  /** The wait room registration the next look carries, if any. */
  readonly registration: RoomRegistration | undefined;
  /** The node the next look probes alone; `undefined`: ask every node. */
  readonly probeAt: number | undefined;
  /** The look `round`, run with `spec`, was judged granted. */
  granted(round: Round<number>, spec: RoundSpec): void;
  /** The look `round` was refused (or its caller gave up while it ran). */
  refused(round: Round<number>, verdict: Pick<Verdict, "busy" | "outcomes">): void;
  /**
   * After a refused look, sleep until the next one may help. Throws the `signal`'s reason when
   * aborted meanwhile.
   */
  pause(refused: Refused): Promise<void>;
  /** What to report when waiting ended without a look of this caller's own (`turn()` false). */
  unheard(): LockError;
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
  /** No look starts after this. */
  readonly waitUntil: number;
  /** Waiting for a turn stops here (the wait, or the budget less its reserve). */
  readonly lineUntil: number;
  /** Subrequests a look must leave over: a round and the release. */
  readonly spare: number;
  /** Sizes the caller's next round now: its terms, or why the budget cannot cover it. */
  readonly size: () => RoundTerms | LockError;
}
