/**
 * The semaphore's side of the lock's queued wait (`QueuedWait`; docs/design/semaphore.md §3,
 * docs/SAFETY.md §4c "Waiting"): looks are SEM_ACQUIRE rounds carrying the call's registration in
 * the semaphore's one room, the count is a {@link SlotTally} (a lock `Tally` per slot, each node
 * counted on one slot at most: S1), hand-offs name their slot, and a split is resolved by a
 * consolidating look on the target slot and then a pass: of everything when a caller placed
 * before us holds the target where we lack it (P4), else of the other slots, keeping the target
 * and preferring it for a while.
 *
 * @module
 */
import type { Budget } from "../budget";
import type { NodeOutcome } from "../errors";
import { type LockCore, type QueueSide, Tally, tokensRuleOutMajority } from "../lock";
import type { SemAcquireReply } from "../scripts";
import { permitFailure } from "./failure";
import { lookRound, passRound, type SlotsPlan } from "./rounds";
import { type SlotDecision, SlotTally } from "./tally";

/** What the semaphore's side needs of its call. */
export interface PermitPlan extends SlotsPlan {
  /** How long a preference for the target slot lasts after a pass that keeps it, ms. */
  readonly preferMs: number;
}

/**
 * The side of a waiting permit call (see the module's comment).
 *
 * @example
 * const wait = new QueuedWait(core, call, queuePlan, permitSide(core, call.budget, plan));
 */
export function permitSide(
  core: LockCore,
  budget: Budget | undefined,
  plan: PermitPlan,
): QueueSide<SlotDecision> {
  const { quorum, options } = core;
  const tally = new SlotTally(
    plan.order,
    () => new Tally(quorum, options.minValidity, options.driftFactor),
  );
  /** Per node: the place of the holder of the first eligible slot that refused us (-1: none). */
  const aheads = new Map<number, number>();
  /** Per node: when its first eligible slot frees at the latest, as last seen (`performance.now()`). */
  const ends = new Map<number, number>();
  /** Per node: its last reply (the failure's per-slot PTTLs). */
  const answers = new Map<number, SemAcquireReply>();
  /** The slot the call consolidates on, and until when (`performance.now()`). */
  let target: { slot: number; until: number } | undefined;
  const consolidating = () =>
    target !== undefined && target.until > performance.now() ? target : undefined;
  return {
    look: ({ look, start, terms, queue }, heard) => {
      const aim = consolidating();
      const spec = {
        ...terms,
        budget,
        eligible: aim === undefined ? plan.order.length : 1,
        first: aim?.slot,
        prefer: aim?.slot,
        preferMs: aim === undefined ? 0 : Math.max(1, Math.ceil(aim.until - start)),
        place: queue.place,
        // Permits carry no fence: a hand-off to us issues none.
        queue: { ...queue, fencing: false },
      };
      return lookRound(core, plan, spec, (index, answer) => {
        const reply = answer.value;
        if (reply !== undefined) answers.set(index, reply);
        if (reply?.granted === true) {
          tally.placed(index, reply.slot, { look, start, ttl: terms.ttl, fence: 0 });
          aheads.delete(index);
          ends.delete(index);
        } else if (answer.status === "held") {
          tally.lost(index, look);
          aheads.set(index, answer.ahead ?? -1);
          const pttl = answer.pttl ?? -1;
          if (pttl >= 0) ends.set(index, start + pttl);
          else ends.delete(index);
        }
        heard();
      });
    },
    handed: (index, handoff) => {
      if (handoff.slot !== undefined) tally.handed(index, handoff.slot, handoff);
    },
    // A split: look again aiming at the slot with the most nodes (eligible 1, so `ahead` speaks
    // of it), then give way if a caller before us holds it where we lack it, else keep it and
    // pass the other slots on the nodes not counted for it.
    stalled: async (acts) => {
      const now = performance.now();
      const slot = tally.target(now);
      target = { slot, until: now + plan.preferMs };
      await acts.look();
      const after = performance.now();
      if (tally.decide(after) !== undefined) return;
      const behind = [...aheads.values()].some((place) => place >= 0);
      const all = core.nodes.map((node) => node.index);
      const pass = tally.passFor(slot, after, behind, all);
      if (pass === undefined) return;
      if (pass.keep === undefined) target = undefined;
      const preferMs = pass.keep === undefined ? 0 : plan.preferMs;
      await acts.pass(({ look, terms, queue }) => {
        tally.passed(look, pass.keep);
        const spec = { token: terms.token, keep: pass.keep, preferMs, budget };
        const sent = { ...spec, queue: { ...queue, fencing: false }, timeoutMs: terms.timeoutMs };
        return passRound(core, plan, sent, pass.nodes);
      });
    },
    holding: (now) => tally.holding(now).length > 0,
    decide: (now) => tally.decide(now),
    expiry: () => [...ends.values()].sort((a, b) => a - b)[quorum - 1] ?? Infinity,
    hopeless: (outcomes: readonly NodeOutcome[]) => tokensRuleOutMajority(core, outcomes),
    failure: (outcomes, cause) =>
      permitFailure(core, plan, { answers, outcomes }, undefined, cause),
  };
}
