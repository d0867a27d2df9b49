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
 * A failed look's error (`answers`: each node's last reply): `SemaphoreBusyError` when the refusing nodes alone rule out a majority
 * on every slot (more than N − Q refused), else the lock's failure for the outcomes (a
 * `QuorumError` naming the nodes).
 *
 * @example
 * throw permitFailure(core, plan, { answers, outcomes: round.outcomes }, undefined);
 */
export function permitFailure(
  core: LockCore,
  plan: SlotsPlan,
  looked: { answers: ReadonlyMap<number, SemAcquireReply>; outcomes: readonly NodeOutcome[] },
  why: string | undefined,
  cause?: unknown,
): LockError {
  const { answers, outcomes } = looked;
  const n = core.nodes.length;
  // Refusals only: a node that placed our token, on any slot, answered `ok`.
  const refusals = outcomes.filter((o) => o.status === "held");
  if (why === undefined && refusals.length > n - core.quorum) {
    const { retryAfter, held } = capacity(core, plan.order.length, answers);
    const permits = plan.order.length;
    const busy = { permits, held, outcomes };
    return new SemaphoreBusyError(
      plan.name,
      retryAfter,
      cause === undefined ? busy : { ...busy, cause },
    );
  }
  const placed = new Set([...answers.values()].flatMap((r) => (r.granted ? [r.slot] : [])));
  const split =
    placed.size > 1 ? "no slot on a majority: nodes placed the call on different slots" : undefined;
  return failureOf(core, plan.name, { outcomes, why: why ?? split }, cause);
}

/**
 * From the refusals' per-slot PTTLs: the slots seen held on a majority (by PTTLs the nodes
 * reported: a node that placed our token or did not answer tells nothing and counts for no slot),
 * and when one slot is free on a majority at most if nobody extends (per slot the Q-th smallest
 * PTTL over the nodes: free 0, no expiry or no answer never; the least over the slots; unknown:
 * `retryDelayMax`).
 */
function capacity(
  core: LockCore,
  permits: number,
  answers: ReadonlyMap<number, SemAcquireReply>,
): { retryAfter: number; held: number } {
  const q = core.quorum;
  let retryAfter = Number.POSITIVE_INFINITY;
  let held = 0;
  for (let slot = 0; slot < permits; slot++) {
    const pttls = core.nodes.map(({ index }) => {
      const reply = answers.get(index);
      const pttl = reply !== undefined && "pttls" in reply ? reply.pttls[slot] : undefined;
      if (pttl === -2) return 0;
      return pttl === undefined || pttl < 0 ? Number.POSITIVE_INFINITY : pttl;
    });
    pttls.sort((a, b) => a - b);
    const free = pttls[q - 1] ?? Number.POSITIVE_INFINITY;
    const reported = core.nodes.filter(({ index }) => {
      const reply = answers.get(index);
      const pttl = reply !== undefined && "pttls" in reply ? reply.pttls[slot] : undefined;
      return pttl !== undefined && pttl !== -2;
    });
    if (reported.length >= q) held++;
    retryAfter = Math.min(retryAfter, free);
  }
  return {
    retryAfter: Number.isFinite(retryAfter) ? retryAfter : core.options.retryDelayMax,
    held,
  };
}
