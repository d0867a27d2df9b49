/**
 * A permit call that waits in the semaphore's room (docs/design/semaphore.md §3; docs/SAFETY.md
 * §4c "Waiting"): one token for all its looks (A5 as for a queued lock call), a hand-off stream
 * on every node, and the lock's `QueuedWait` loop with the semaphore's side, until a majority is
 * counted on one slot. Granted, it trims the other slots on the nodes not counted for that slot
 * (which also removes its record there: no hand-off reaches it afterwards); a call that ends
 * without a permit is ended on every node (DISCARD_SLOTS over every slot, with its tombstone).
 *
 * @module
 */
import type { LockError } from "../errors";
import {
  budgetShortfall,
  handMsFor,
  type LockCore,
  newToken,
  QueuedWait,
  type ResolvedCall,
  type RoundTerms,
} from "../lock";
import { type PermitGrant, permitGrant, trim, trimReserve } from "./grant";
import { endRound, type SlotsPlan } from "./rounds";
import { permitSide } from "./side";

/** What a permit call brings to its wait from its first look. */
export interface PermitQueueCall {
  /** Epoch ms of the call: its place in the room. */
  readonly place: number;
  readonly waitUntil: number;
  /** When the call began (`performance.now()`), and how many looks it made before. */
  readonly began: number;
  readonly looked: number;
}

/**
 * Wait in the room for a permit of `plan`'s semaphore.
 *
 * @throws {SemaphoreBusyError} | {QuorumError} | {BudgetExhaustedError} the last look's failure
 *   once the wait is over; the call's `signal`'s reason when aborted
 * @example
 * return await queuedPermit(core, plan, call, { place, waitUntil, began, looked: 1 });
 */
export async function queuedPermit(
  core: LockCore,
  plan: SlotsPlan,
  call: ResolvedCall,
  from: PermitQueueCall,
): Promise<PermitGrant> {
  const { budget, lease } = call;
  const n = core.nodes.length;
  const token = newToken();
  const size = (): RoundTerms | LockError => {
    const ttl = budget === undefined ? lease : budget.ttl(lease);
    const requests = 2 * n + trimReserve(n, core.quorum);
    const shortfall = budget && budgetShortfall(core, budget, { ttl, requests });
    return shortfall ?? { token, ttl, timeoutMs: core.timeoutFor(ttl) };
  };
  const queuePlan = {
    ...{ key: plan.name, place: from.place, token, waitUntil: from.waitUntil, size },
    ...{ began: from.began, looked: from.looked, seen: () => {}, short: (e: LockError) => e },
  };
  const preferMs = handMsFor(lease, core.timeoutFor(lease));
  const side = permitSide(core, budget, { ...plan, preferMs });
  const wait = new QueuedWait(core, call, queuePlan, side);
  const listening = core.streams.listen(core.nodes, plan.keys.room, token, (index, h) =>
    wait.handed(index, h),
  );
  let granted = false;
  let last: RoundTerms | undefined;
  try {
    await listening.opened(budget, core.timeoutFor(lease));
    const queued = await wait.run();
    last = queued.terms;
    const { ttl, timeoutMs } = queued.terms;
    const { slot, validUntil, outcomes } = queued;
    const keepMs = Math.max(ttl, handMsFor(ttl, timeoutMs));
    const short = validUntil - performance.now() < ttl / 2;
    const won = { slot, token, validUntil, lease, timeoutMs, outcomes, keepMs, short };
    const counted = new Set(queued.nodes);
    const others = core.nodes.map((node) => node.index).filter((index) => !counted.has(index));
    granted = true;
    const trimmed = trim(core, plan, { ...won, budget }, others);
    return { grant: permitGrant(core, plan, won, trimmed), slot };
  } finally {
    listening.close();
    if (!granted) {
      const { ttl, timeoutMs } = last ?? { ttl: lease, timeoutMs: core.timeoutFor(lease) };
      const keepMs = Math.max(ttl, handMsFor(ttl, timeoutMs));
      const spec = { token, slots: plan.order, keepMs, timeoutMs, budget };
      void endRound(core, plan, spec, { release: false }).catch(() => {});
    }
  }
}
