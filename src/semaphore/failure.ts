/**
 * The failure a permit call reports (docs/design/semaphore.md §4 "Errors"): at capacity a
 * `SemaphoreBusyError` whose `retryAfter` comes from every slot's PTTLs, else the lock's failure
 * for the outcomes (a `QuorumError` naming the nodes).
 *
 * @module
 */
import { type LockError, type NodeOutcome, SemaphoreBusyError } from "../errors";
import { failureOf, type LockCore } from "../lock";
import type { SemAcquireReply } from "../scripts";
import type { SlotsPlan } from "./rounds";

/**
 * A failed look's error (`answers`: each node's last reply; `order`: the first look's order of
 * slots, when the caller knows it): `SemaphoreBusyError` when more than N − Q nodes refused, or
 * when, on every slot, more than N − Q nodes are known to hold it for others — a refusal's PTTLs name its held slots, and a node that
 * placed the call on a slot had every slot before it in the look's order taken — or when every
 * node answered and no slot has a majority (nothing but other calls' tokens stood in the way).
 * Our own placements are never refusals: a split of them with a node failing is not "at
 * capacity" (as a lock's split vote is not busy). Else the lock's failure for the outcomes (a
 * `QuorumError` naming the nodes).
 *
 * @example
 * throw permitFailure(core, plan, { answers, outcomes: round.outcomes }, undefined);
 */
export function permitFailure(
  core: LockCore,
  plan: SlotsPlan,
  looked: {
    answers: ReadonlyMap<number, SemAcquireReply>;
    outcomes: readonly NodeOutcome[];
    order?: readonly number[] | undefined;
  },
  why: string | undefined,
  cause?: unknown,
): LockError {
  const { answers, outcomes, order } = looked;
  const n = core.nodes.length;
  const permits = plan.order.length;
  const taken = takenPerSlot(permits, answers, order);
  const refusals = outcomes.filter((o) => o.status === "held").length;
  const answeredAll = outcomes.every((o) => ["ok", "held", "absent"].includes(o.status));
  const full = refusals > n - core.quorum || taken.every((count) => count > n - core.quorum);
  if (why === undefined && (full || answeredAll)) {
    const held = taken.filter((count) => count >= core.quorum).length;
    const permitsHeld = { permits, held, outcomes };
    return new SemaphoreBusyError(
      plan.name,
      retryAfterOf(core, permits, answers),
      cause === undefined ? permitsHeld : { ...permitsHeld, cause },
    );
  }
  const placed = new Set([...answers.values()].flatMap((r) => (r.granted ? [r.slot] : [])));
  const split =
    placed.size > 1 ? "no slot on a majority: nodes placed the call on different slots" : undefined;
  return failureOf(core, plan.name, { outcomes, why: why ?? split, subject: "semaphore" }, cause);
}

/** Per slot, the nodes known to hold it for another call (see {@link permitFailure}). */
function takenPerSlot(
  permits: number,
  answers: ReadonlyMap<number, SemAcquireReply>,
  order: readonly number[] | undefined,
): number[] {
  const taken = Array.from({ length: permits }, () => 0);
  for (const reply of answers.values()) {
    if ("pttls" in reply) {
      reply.pttls.forEach((pttl, slot) => {
        if (slot < permits && pttl !== -2) taken[slot] = (taken[slot] ?? 0) + 1;
      });
    } else if (reply.granted && order !== undefined) {
      for (const slot of order.slice(0, Math.max(0, order.indexOf(reply.slot)))) {
        taken[slot] = (taken[slot] ?? 0) + 1;
      }
    }
  }
  return taken;
}

/**
 * From the refusals' per-slot PTTLs: when one slot is free on a majority at most if nobody
 * extends (per slot the Q-th smallest PTTL over the nodes: free 0, no expiry or no answer never;
 * the least over the slots; unknown: `retryDelayMax`).
 */
function retryAfterOf(
  core: LockCore,
  permits: number,
  answers: ReadonlyMap<number, SemAcquireReply>,
): number {
  const q = core.quorum;
  let retryAfter = Number.POSITIVE_INFINITY;
  for (let slot = 0; slot < permits; slot++) {
    const pttls = core.nodes.map(({ index }) => {
      const reply = answers.get(index);
      const pttl = reply !== undefined && "pttls" in reply ? reply.pttls[slot] : undefined;
      if (pttl === -2) return 0;
      return pttl === undefined || pttl < 0 ? Number.POSITIVE_INFINITY : pttl;
    });
    pttls.sort((a, b) => a - b);
    retryAfter = Math.min(retryAfter, pttls[q - 1] ?? Number.POSITIVE_INFINITY);
  }
  return Number.isFinite(retryAfter) ? retryAfter : core.options.retryDelayMax;
}
