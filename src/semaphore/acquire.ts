/**
 * A permit call (docs/design/semaphore.md §3; docs/SAFETY.md §4c): looks until one slot is
 * named by a majority with `minValidity` left, then the trim of the other slots; a failed look is
 * ended everywhere it may have placed its token (DISCARD_SLOTS over every slot, with the look's
 * tombstone: L3), and the next look draws a fresh token, as a lock's polling rounds do.
 *
 * @module
 */
import { type NodeOutcome, SemaphoreBusyError } from "../errors";
import {
  budgetShortfall,
  type LockCore,
  newToken,
  type ResolvedCall,
  random,
  sleep,
  waitEnd,
} from "../lock";
import { drift, type Round } from "../quorum";
import type { SemAcquireReply } from "../scripts";
import { permitFailure } from "./failure";
import { type PermitGrant, permitGrant, trim, trimReserve } from "./grant";
import { queuedPermit } from "./queued";
import { endRound, lookRound, type SlotsPlan, slotMajority } from "./rounds";

/** One look's result: the answers heard (node → reply) and the round. */
interface Looked {
  readonly round: Round<SemAcquireReply>;
  readonly answers: Map<number, SemAcquireReply>;
  readonly ttl: number;
  readonly timeoutMs: number;
  readonly token: string;
  /** The look's order of slots: each node placed the token on the first it found free. */
  readonly order: readonly number[];
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
  const began = performance.now();
  const waitUntil = waitEnd(call, began, core.timeoutFor(lease));
  const place = Date.now();
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    const ttl = budget === undefined ? lease : budget.ttl(lease);
    const requests = 2 * n + trimReserve(n, core.quorum);
    const shortfall = budget && budgetShortfall(core, budget, { ttl, requests });
    if (shortfall !== undefined) throw shortfall;
    // A caller that does not wait comes after every waiter; one that waits, at its call's place.
    const at = call.wait > 0 ? place : undefined;
    // Each retry starts its rotation at the next slot: a split the last look met (a token left on
    // one node, a node down) is not met again in the same way.
    const first = plan.order[attempt % plan.order.length];
    const looked = await look(core, plan, { ttl, budget, place: at, first });
    const { round, answers, order } = looked;
    const slot = slotMajority(answers, core.quorum);
    const validUntil = round.startedAt + ttl - drift(ttl, core.options.driftFactor);
    const durationMs = performance.now() - round.startedAt;
    const granted =
      slot !== undefined && validUntil - performance.now() >= core.options.minValidity;
    const outcomes = decided(round.outcomes, answers);
    if (granted && !signal?.aborted) {
      core.emit({
        type: "acquire",
        key: plan.name,
        attempt,
        result: "granted",
        durationMs,
        outcomes,
      });
      const { token, timeoutMs } = looked;
      const won = {
        slot,
        token,
        validUntil,
        lease,
        timeoutMs,
        outcomes,
        keepMs: ttl,
        short: false,
      };
      // Each node that did not name `slot`, once its look answered.
      const all = core.nodes.map((node) => node.index);
      const trimmed = trim(core, plan, { ...won, budget }, all, async (index) => {
        await round.each[index];
        return !counted(answers, index, slot);
      });
      return { grant: permitGrant(core, plan, won, trimmed), slot };
    }
    // Not granted (or the caller gave up meanwhile): end the look's token everywhere.
    void end(core, plan, looked, budget).catch(() => {});
    signal?.throwIfAborted();
    const why = slot !== undefined ? "too little validity left" : undefined;
    const error = permitFailure(core, plan, { answers, outcomes, order }, why);
    const result = error instanceof SemaphoreBusyError ? "busy" : "unavailable";
    core.emit({ type: "acquire", key: plan.name, attempt, result, durationMs, outcomes });
    const now = performance.now();
    // At capacity with time left: wait in the room (its last requests answer first: on Workers
    // a request has six connections, and the N streams are about to open).
    if (error instanceof SemaphoreBusyError && now < waitUntil) {
      await round.settled;
      const from = { place, waitUntil, began, looked: attempt + 1 };
      return await queuedPermit(core, plan, call, from);
    }
    if (now >= waitUntil) {
      // A look decided by fast failures before a refusing node answered: its answer tells a
      // busy semaphore from an outage (one request timeout at most), as a lock's give-up does.
      const pending = round.outcomes.some((o) => o.status === "pending");
      if (error instanceof SemaphoreBusyError || !pending) throw error;
      const settled = decided(await round.settled, answers);
      throw permitFailure(core, plan, { answers, outcomes: settled, order }, why);
    }
    // No majority answered in time (an outage, or too little validity): try again after a
    // jittered pause, with a fresh token.
    const { retryDelay, retryDelayMax } = core.options;
    const pause = retryDelay + random() * Math.max(0, retryDelayMax - retryDelay);
    await sleep(Math.min(pause, waitUntil - now), signal);
  }
}

/** One look with a fresh token; every answer is recorded as it comes. */
async function look(
  core: LockCore,
  plan: SlotsPlan,
  by: {
    ttl: number;
    budget: ResolvedCall["budget"];
    place: number | undefined;
    first: number | undefined;
  },
): Promise<Looked> {
  const { ttl, budget, place, first } = by;
  const token = newToken();
  const timeoutMs = core.timeoutFor(ttl);
  const answers = new Map<number, SemAcquireReply>();
  const spec = { token, ttl, timeoutMs, budget, eligible: plan.order.length, place, first };
  const round = await lookRound(core, plan, spec, (index, answer) => {
    if (answer.value !== undefined) answers.set(index, answer.value);
  });
  // A majority placed our token, on different slots (a release seen in different orders): the
  // nodes still pending may complete one slot's majority.
  if (round.ok && slotMajority(answers, core.quorum) === undefined) await round.settled;
  const order =
    first === undefined ? plan.order : [first, ...plan.order.filter((s) => s !== first)];
  return { round, answers, ttl, timeoutMs, token, order };
}

/**
 * A look's outcomes as reported: every node that placed our token `ok` (on the permit's slot or
 * another: our own placement is never a refusal, so it never makes a split read as "at capacity"
 * or "held by another caller"), the others as they answered.
 */
function decided(
  outcomes: readonly NodeOutcome[],
  answers: ReadonlyMap<number, SemAcquireReply>,
): NodeOutcome[] {
  return outcomes.map((o) => (answers.get(o.index)?.granted === true ? { ...o, status: "ok" } : o));
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

/** Whether node `index` named `slot` in the look (`answers`). */
function counted(
  answers: ReadonlyMap<number, SemAcquireReply>,
  index: number,
  slot: number,
): boolean {
  const reply = answers.get(index);
  return reply?.granted === true && reply.slot === slot;
}
