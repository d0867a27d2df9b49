import type { Budget } from "../budget/budget";
import {
  BudgetExhaustedError,
  LockBusyError,
  type LockError,
  type NodeOutcome,
  QuorumError,
} from "../errors";
import type { Round } from "../quorum/fanout";
import { bestValidity, freeAfter } from "../quorum/validity";
import type { Keys, LockCore } from "./core";
import { holdsOf } from "./holds";
import type { LocalLine } from "./queue";

/**
 * Why the budget cannot cover one more round (time beyond `reserve`, minimum validity, or
 * `requests` subrequests: a round's cost plus N for the release), or `undefined` when it can.
 */
export function budgetShortfall(
  core: LockCore,
  budget: Budget,
  ttl: number,
  requests: number,
  reserve: number = budget.reserve,
): BudgetExhaustedError | undefined {
  const remaining = budget.remaining();
  const left = budget.remainingSubrequests();
  const { driftFactor, minValidity } = core.options;
  let why: string | undefined;
  if (remaining - reserve <= 0) {
    why = `${Math.round(remaining)} ms left, ${reserve} ms reserved for the work`;
  } else if (bestValidity(ttl, driftFactor) < Math.max(1, minValidity)) {
    why = `a ${ttl} ms grant could not reach minValidity (${minValidity} ms)`;
  } else if (left < requests) {
    why = `${left} subrequests left, ${requests} needed (round + release)`;
  }
  return why === undefined
    ? undefined
    : new BudgetExhaustedError(`budget exhausted: ${why}`, remaining, left);
}

/**
 * Release a failed look's token on every node that may have granted it (timeouts and errors
 * included). Only the release on nodes that granted is awaited: they just answered, so it is
 * quick, and it must land before the next round. A node that timed out or failed is released in
 * the background, and one still in flight once its acquire answered (if it may have granted):
 * waiting on them would let one slow node slow every failed acquire. The next acquire on such a
 * node waits for that release first (`LockCore` orders them per node and key). Each round has a
 * fresh token, so a late cleanup can never touch a later round's grant; whatever a cleanup misses
 * expires with its TTL. `round` may cover some nodes only (a probe).
 */
export async function cleanup(
  core: LockCore,
  round: Round<number>,
  keys: Keys,
  token: string,
  timeoutMs: number,
  budget: Budget | undefined,
): Promise<void> {
  const holds = holdsOf(round);
  const nodeOf = (o: NodeOutcome) => core.nodes[o.index] ?? [];
  const granted = round.outcomes.filter((o) => o.status === "ok").flatMap(nodeOf);
  const others = round.outcomes
    .filter((o) => o.status !== "ok" && holds[o.index] !== false)
    .flatMap(nodeOf);
  if (others.length > 0) {
    const scope = { nodes: others, holds, waitAll: true };
    void core.releaseRound(keys, token, timeoutMs, budget, scope).catch(() => {});
  }
  if (granted.length > 0) {
    await core.releaseRound(keys, token, timeoutMs, budget, { nodes: granted, waitAll: true });
  }
}

export const isDone = (o: NodeOutcome): boolean => o.status === "done";

/**
 * The error for a failed look: busy whenever a node holds a done marker (a finished `once()` job
 * keeps its key until the marker expires; `retryAfter` = the marker's PTTL); a `QuorumError` when
 * failures alone rule out a majority (or the round failed for a reason of its own, `why`);
 * otherwise, if another holder answered, busy. `outcomes` may cover some nodes only (a probe):
 * the nodes not asked count neither as failed nor as busy.
 */
export function failureOf(
  core: LockCore,
  key: string,
  outcomes: readonly NodeOutcome[],
  why: string | undefined,
  cause?: unknown,
): LockError {
  const held = outcomes.filter((o) => o.status === "held");
  const failed = outcomes.filter((o) => o.status === "timeout" || o.status === "error").length;
  const options = cause === undefined ? { outcomes } : { outcomes, cause };
  const markers = outcomes.filter(isDone).map((o) => o.pttl ?? -1);
  if (markers.length > 0) {
    const kept = markers.filter((p) => p >= 0);
    const retryAfter = kept.length > 0 ? Math.max(...kept) : core.options.retryDelayMax;
    return new LockBusyError(key, retryAfter, options);
  }
  const majorityPossible = failed <= core.nodes.length - core.quorum;
  if (held.length > 0 && why === undefined && majorityPossible) {
    const granted = outcomes.filter((o) => o.status === "ok").length;
    const pttls = held.map((o) => o.pttl ?? -1);
    const expiring = pttls.filter((p) => p >= 0);
    // No majority can free up by expiry alone (failures, holders without TTL, or nodes not
    // asked): report the longest known PTTL, or the longest retry sleep when none is known.
    const retryAfter =
      freeAfter(pttls, granted, core.quorum) ??
      (expiring.length > 0 ? Math.max(...expiring) : core.options.retryDelayMax);
    return new LockBusyError(key, retryAfter, options);
  }
  const message =
    why ?? `no majority: ${failed} of ${outcomes.length} nodes failed, ${held.length} busy`;
  return new QuorumError(key, message, options);
}

/**
 * The error for a caller that waited in its {@link LocalLine} and gave up before it asked the
 * nodes itself: busy while a grant of this `Locks` instance holds the key (`retryAfter` = that
 * grant's remaining validity, no outcomes), else what the first waiter saw last.
 *
 * @example
 * if (!(await waitTurn(line, ticket, until, signal, next))) throw unheardFailure(core, key, line);
 */
export function unheardFailure(core: LockCore, key: string, line: LocalLine): LockError {
  const now = performance.now();
  const held = line.held(now) > 0;
  if (held || line.last === undefined) {
    const left = Math.max(0, Math.ceil(line.heldUntil(now) - now));
    return new LockBusyError(key, held ? left : core.options.retryDelay, { outcomes: [] });
  }
  return failureOf(core, key, line.last.outcomes, line.last.why);
}
