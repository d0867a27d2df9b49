import type { Budget } from "../../budget";
import type { NodeOutcome } from "../../errors";
import type { LockCore } from "../core";
import { lockFailure, tokensRuleOutMajority } from "../failure";
import type { Keys } from "../spec";
import type { QueueSide } from "./side";
import { type Counting, Tally } from "./tally";

/** What the lock's side needs of its call (see {@link lockSide}). */
export interface LockPlan {
  /** The lock's name, for its failures. */
  readonly key: string;
  readonly keys: Keys;
  /** No look starts after this (a done marker that outlasts it makes the wait hopeless). */
  readonly waitUntil: number;
}

/** Whether some value in `map` is above `than`. */
const someAbove = (map: ReadonlyMap<number, number>, than: number): boolean =>
  [...map.values()].some((value) => value > than);

/**
 * The lock's side of a queued wait (`QueuedWait`; docs/SAFETY.md §6 "The queue"): its looks are
 * ACQUIRE rounds carrying the call's registration, its count is one {@link Tally} of placements
 * (P1, P2) and hand-offs (P3), and when patience runs out it passes (H5, P4) if a caller placed
 * before it holds a node it lacks, else looks at once. A done marker seen on a node forbids a
 * grant while it stands (the job of this key finished), and makes the wait hopeless when it
 * outlasts the wait. Failures are the lock's (`failureOf`): busy, or a `QuorumError`.
 *
 * @example
 * const wait = new QueuedWait(core, call, plan, lockSide(core, call.budget, plan));
 */
export function lockSide(
  core: LockCore,
  budget: Budget | undefined,
  plan: LockPlan,
): QueueSide<Counting> {
  const { quorum, options } = core;
  const { key, keys } = plan;
  const tally = new Tally(quorum, options.minValidity, options.driftFactor);
  /** Per node: the place of the holder that refused our last look there (-1: unknown). */
  const aheads = new Map<number, number>();
  /** Per node: when the holder that refused our last look there expires (`performance.now()`). */
  const ends = new Map<number, number>();
  /** Per node: until when a done marker seen there stands (`performance.now()`; no grant before). */
  const marked = new Map<number, number>();
  return {
    // ACQUIRE with our registration on every node, each answer counted as it comes.
    look: ({ look, start, terms, queue }, heard) =>
      core.acquireRound({ keys, ...terms, budget, queue }, undefined, (index, answer) => {
        marked.delete(index);
        const pttl = answer.pttl ?? -1;
        if (answer.status === "ok") {
          tally.placed(index, { look, start, ttl: terms.ttl, fence: answer.fence ?? 0 });
          aheads.delete(index);
          ends.delete(index);
        } else if (answer.status === "done") {
          marked.set(index, pttl < 0 ? Infinity : start + pttl);
        } else if (answer.status === "held") {
          tally.lost(index, look);
          aheads.set(index, answer.ahead ?? -1);
          if (pttl >= 0) ends.set(index, start + pttl);
          else ends.delete(index);
        }
        heard();
      }),
    // A node that handed us the key has nobody ahead there any more.
    handed: (index, handoff) => {
      aheads.delete(index);
      tally.handed(index, handoff);
    },
    // A caller before us in the queue's order holds a node we lack: we are the one to give way.
    // The node compares (place, token) and reports the holder's place only then (ACQUIRE):
    // callers that started in the same millisecond (the callers of one instance in a burst) have
    // one place, and comparing places alone left each of a split's holders waiting for the
    // others to pass (a place is never negative; -1: none ahead). Else the release is in flight
    // or a message was lost: a look now finds out.
    stalled: (acts) => {
      if (!someAbove(aheads, -1)) return acts.soon();
      // A pass acts on one look: the next one looks first (the holder ahead may have released).
      aheads.clear();
      return acts.pass(({ look, terms, queue }) => {
        tally.passed(look);
        return core.passRound({ keys, ...terms, budget }, queue);
      });
    },
    holding: (now) => tally.holding(now).length > 0,
    // A done marker seen on some node still stands: the job of this key finished, never grant.
    decide: (now) => (someAbove(marked, now) ? undefined : tally.decide(now)),
    expiry: () => [...ends.values()].sort((a, b) => a - b)[quorum - 1] ?? Infinity,
    // A done marker is never released early: waiting helps only if it expires within the wait.
    hopeless: (outcomes: readonly NodeOutcome[]) =>
      tokensRuleOutMajority(core, outcomes) || someAbove(marked, plan.waitUntil),
    failure: lockFailure(core, key),
  };
}
