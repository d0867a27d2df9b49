/**
 * A permit call (docs/design/semaphore.md §3; docs/SAFETY.md §4c): looks until one slot is
 * named by a majority with `minValidity` left, then the trim of the other slots; a failed look is
 * ended everywhere it may have placed its token (DISCARD_SLOTS over every slot, with the look's
 * tombstone: L3), and the next look draws a fresh token, as a lock's polling rounds do.
 *
 * @module
 */
import type { LockError, NodeOutcome } from "../errors";
import { SemaphoreBusyError } from "../errors";
import {
  budgetShortfall,
  failureOf,
  type Grant,
  type LockCore,
  newToken,
  type ResolvedCall,
  random,
  sleep,
} from "../lock";
import { drift, type Round } from "../quorum";
import { PERMIT_INFIX, type SemAcquireReply } from "../scripts";
import { endRound, lookRound, type SlotsPlan, slotMajority } from "./rounds";

/** A permit granted: the lock's grant over the slot's key, and the slot. */
export interface PermitGrant {
  readonly grant: Grant;
  readonly slot: number;
}

/** One look's result: the answers heard (node → reply) and the round. */
interface Looked {
  readonly round: Round<SemAcquireReply>;
  readonly answers: Map<number, SemAcquireReply>;
  readonly ttl: number;
  readonly timeoutMs: number;
  readonly token: string;
}

/**
 * Acquire one permit of `plan`'s semaphore within `call.wait`.
 *
 * @throws {BudgetExhaustedError} the first look cannot be covered (no node called)
 * @throws {SemaphoreBusyError} every permit stayed held on a majority until the wait ended
 * @throws {QuorumError} no majority answered
 * @throws the call's `signal`'s reason when aborted (a permit granted meanwhile is released)
 * @example
 * const { grant, slot } = await acquirePermit(core, plan, call);
 */
export async function acquirePermit(
  core: LockCore,
  plan: SlotsPlan,
  call: ResolvedCall,
): Promise<PermitGrant> {
  const { lease, budget, signal } = call;
  const n = core.nodes.length;
  const waitUntil = performance.now() + call.wait;
  const place = Date.now();
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    const ttl = budget === undefined ? lease : budget.ttl(lease);
    const shortfall = budget && budgetShortfall(core, budget, { ttl, requests: 2 * n });
    if (shortfall !== undefined) throw shortfall;
    const looked = await look(core, plan, { ttl, budget, place });
    const { round, answers } = looked;
    const slot = slotMajority(answers, core.quorum);
    const validUntil = round.startedAt + ttl - drift(ttl, core.options.driftFactor);
    const durationMs = performance.now() - round.startedAt;
    const granted =
      slot !== undefined && validUntil - performance.now() >= core.options.minValidity;
    const outcomes = decided(round.outcomes, answers, slot);
    if (granted && !signal?.aborted) {
      core.emit({
        type: "acquire",
        key: plan.name,
        attempt,
        result: "granted",
        durationMs,
        outcomes,
      });
      return { grant: grantOf(core, plan, { ...looked, slot, validUntil, lease, outcomes }), slot };
    }
    // Not granted (or the caller gave up meanwhile): end the look's token everywhere.
    void end(core, plan, looked, budget).catch(() => {});
    signal?.throwIfAborted();
    const why = slot !== undefined ? "too little validity left" : undefined;
    const error = failure(core, plan, { answers, outcomes }, why);
    const result = error instanceof SemaphoreBusyError ? "busy" : "unavailable";
    core.emit({ type: "acquire", key: plan.name, attempt, result, durationMs, outcomes });
    const now = performance.now();
    if (now >= waitUntil) {
      // A look decided by fast failures before a refusing node answered: its answer tells a
      // busy semaphore from an outage (one request timeout at most), as a lock's give-up does.
      const pending = round.outcomes.some((o) => o.status === "pending");
      if (error instanceof SemaphoreBusyError || !pending) throw error;
      const settled = decided(await round.settled, answers, slot);
      throw failure(core, plan, { answers, outcomes: settled }, why);
    }
    const { retryDelay, retryDelayMax } = core.options;
    const hint = error instanceof SemaphoreBusyError ? error.retryAfter : retryDelay;
    const pause = Math.min(retryDelayMax, Math.max(retryDelay, hint)) * (0.5 + random() / 2);
    await sleep(Math.min(pause, waitUntil - now), signal);
  }
}

/** One look with a fresh token; every answer is recorded as it comes. */
async function look(
  core: LockCore,
  plan: SlotsPlan,
  by: { ttl: number; budget: ResolvedCall["budget"]; place: number },
): Promise<Looked> {
  const { ttl, budget, place } = by;
  const token = newToken();
  const timeoutMs = core.timeoutFor(ttl);
  const answers = new Map<number, SemAcquireReply>();
  const spec = { token, ttl, timeoutMs, budget, eligible: plan.order.length, place };
  const round = await lookRound(core, plan, spec, (index, answer) => {
    if (answer.value !== undefined) answers.set(index, answer.value);
  });
  // A majority placed our token, on different slots (a release seen in different orders): the
  // nodes still pending may complete one slot's majority.
  if (round.ok && slotMajority(answers, core.quorum) === undefined) await round.settled;
  return { round, answers, ttl, timeoutMs, token };
}

/** A look's outcomes as reported: the slot's nodes `ok`, the others as they answered. */
function decided(
  outcomes: readonly NodeOutcome[],
  answers: ReadonlyMap<number, SemAcquireReply>,
  slot: number | undefined,
): NodeOutcome[] {
  return outcomes.map((o) => {
    const reply = answers.get(o.index);
    if (reply?.granted !== true) return o;
    return reply.slot === slot ? { ...o, status: "ok" } : { ...o, status: "held" };
  });
}

/**
 * The grant of slot `slot`: validity from the look's start (E2 for the slot's key), released by
 * RELEASE_SLOTS over every slot with the call's tombstone for the lease (L3), after the trim of
 * the other slots on every node that did not name `slot` (capacity, design §2c).
 */
function grantOf(
  core: LockCore,
  plan: SlotsPlan,
  won: Looked & { slot: number; validUntil: number; lease: number; outcomes: NodeOutcome[] },
): Grant {
  const { round, answers, token, ttl, timeoutMs, slot, validUntil, lease, outcomes } = won;
  const others = plan.order.filter((s) => s !== slot);
  const keepMs = ttl;
  // Each node not counted for `slot`, once its look answered (a look still in flight may place
  // the token on another slot): the trim deletes it there and leaves the tombstone.
  const trimmed = Promise.all(
    core.nodes.map(async (node) => {
      await round.each[node.index];
      const reply = answers.get(node.index);
      if (others.length === 0 || (reply?.granted === true && reply.slot === slot)) return;
      const spec = { token, slots: others, keepMs, timeoutMs, budget: undefined };
      await (await endRound(core, plan, spec, { nodes: [node.index], release: false })).settled;
    }),
  ).catch(() => {});
  const triple = plan.keys.slots[slot] as Grant["keys"][number];
  const all = plan.keys.slots.map((_, s) => s);
  return {
    key: plan.name,
    names: [`${plan.name}${PERMIT_INFIX}${slot}`],
    keys: [triple],
    token,
    fence: undefined,
    lease,
    validUntil,
    timeoutMs,
    outcomes,
    holds: core.nodes.map(() => true),
    local: { end: () => {}, renew: () => {} },
    release: async ({ budget }) => {
      const spec = { token, slots: all, keepMs, timeoutMs, budget };
      const released = await endRound(core, plan, spec, { release: true });
      const settled = Promise.all([trimmed, released.settled]).then(([, s]) => s);
      return { ...released, settled };
    },
  };
}

/** End a failed look's token on every node where it may be (all but the refusing ones). */
async function end(
  core: LockCore,
  plan: SlotsPlan,
  looked: Looked,
  budget: ResolvedCall["budget"],
): Promise<void> {
  const { answers, token, ttl, timeoutMs } = looked;
  const refused = (index: number) => answers.get(index)?.granted === false;
  const nodes = core.nodes.map((node) => node.index).filter((index) => !refused(index));
  if (nodes.length === 0) return;
  const spec = { token, slots: plan.order, keepMs: ttl, timeoutMs, budget };
  await (await endRound(core, plan, spec, { nodes, release: false })).settled;
}

/**
 * A failed look's error: `SemaphoreBusyError` when the refusing nodes alone rule out a majority
 * on every slot (more than N − Q refused), else the lock's failure for the outcomes (a
 * `QuorumError` naming the nodes).
 */
function failure(
  core: LockCore,
  plan: SlotsPlan,
  looked: { answers: ReadonlyMap<number, SemAcquireReply>; outcomes: readonly NodeOutcome[] },
  why: string | undefined,
): LockError {
  const { answers, outcomes } = looked;
  const n = core.nodes.length;
  const refusals = outcomes.filter((o) => o.status === "held");
  if (why === undefined && refusals.length > n - core.quorum) {
    const { retryAfter, held } = capacity(core, plan.order.length, answers);
    const permits = plan.order.length;
    return new SemaphoreBusyError(plan.name, retryAfter, { permits, held, outcomes });
  }
  return failureOf(core, plan.name, { outcomes, why });
}

/**
 * From the refusals' per-slot PTTLs: the slots seen held on a majority, and when one slot is free
 * on a majority at most if nobody extends (per slot the Q-th smallest PTTL over the nodes: free
 * 0, no expiry or no answer never; the least over the slots; unknown: `retryDelayMax`).
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
    if (pttls.filter((p) => p > 0).length >= q) held++;
    retryAfter = Math.min(retryAfter, free);
  }
  return {
    retryAfter: Number.isFinite(retryAfter) ? retryAfter : core.options.retryDelayMax,
    held,
  };
}
