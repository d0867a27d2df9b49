import type { Budget } from "../budget/budget";
import {
  BudgetExhaustedError,
  LockBusyError,
  type LockError,
  type NodeOutcome,
  QuorumError,
} from "../errors";
import type { RestNode } from "../node/node";
import type { ResolvedCall } from "../options";
import type { Round } from "../quorum/fanout";
import { bestValidity, drift, freeAfter, isValidGrant, validity } from "../quorum/validity";
import type { Keys, LockCore } from "./core";
import { newToken, retryDelay, sleep } from "./timing";

/** A successful acquisition, before it is wrapped in a `Lock`. */
export interface Grant {
  readonly key: string;
  readonly keys: Keys;
  readonly token: string;
  readonly fence: number | undefined;
  readonly lease: number;
  /** End of validity on the `performance.now()` clock. */
  readonly validUntil: number;
  readonly timeoutMs: number;
  readonly outcomes: readonly NodeOutcome[];
}

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

const mayHaveGranted = (o: NodeOutcome) =>
  o.status === "ok" || o.status === "timeout" || o.status === "error" || o.status === "pending";

/**
 * Release the failed round's token on every node that may have granted it (timeouts and errors
 * included). Only the release on nodes that granted is awaited: they just answered, so it is
 * quick, and it must land before the next round. A node that timed out, failed or is still in
 * flight is released in the background: waiting on it would let one slow node slow every failed
 * acquire. Each round has a fresh token, so a late cleanup can never touch a later round's grant;
 * whatever a cleanup misses expires with its TTL.
 */
async function cleanup(
  core: LockCore,
  round: Round<number>,
  keys: Keys,
  token: string,
  timeoutMs: number,
  budget: Budget | undefined,
): Promise<void> {
  const granted: RestNode[] = [];
  const doubtful: RestNode[] = [];
  round.outcomes.forEach((outcome, position) => {
    const node = core.nodes[position] as RestNode;
    if (outcome.status === "ok") granted.push(node);
    else if (outcome.status === "pending") {
      const late = (round.each[position] as Promise<NodeOutcome>).then((final) =>
        mayHaveGranted(final)
          ? core.releaseRound(keys, token, timeoutMs, budget, [node], true)
          : undefined,
      );
      void late.catch(() => {});
    } else if (mayHaveGranted(outcome)) doubtful.push(node);
  });
  if (doubtful.length > 0) {
    void core.releaseRound(keys, token, timeoutMs, budget, doubtful, true).catch(() => {});
  }
  if (granted.length > 0) await core.releaseRound(keys, token, timeoutMs, budget, granted, true);
}

const isDone = (o: NodeOutcome) => o.status === "done";

/**
 * The error for a failed round: busy whenever a node holds a done marker (a finished `once()` job
 * keeps its key until the marker expires; `retryAfter` = the marker's PTTL); a `QuorumError` when
 * failures alone rule out a majority (or the round failed for a reason of its own, `why`);
 * otherwise, if another holder answered, busy.
 */
function failureOf(
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
  const majorityPossible = failed <= outcomes.length - core.quorum;
  if (held.length > 0 && why === undefined && majorityPossible) {
    const granted = outcomes.filter((o) => o.status === "ok").length;
    const pttls = held.map((o) => o.pttl ?? -1);
    const expiring = pttls.filter((p) => p >= 0);
    // No majority can free up by expiry alone (failures, or holders without TTL): report the
    // longest known PTTL, or the longest retry sleep when none is known.
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
 * The acquire loop (DESIGN §3): fresh token per round, one acquire round on all nodes, a fence
 * round when fencing on N > 1, validity check; on failure release everywhere that may have
 * granted, then sleep (holders' PTTL, full jitter, capped) and retry within `wait` and the budget.
 *
 * @throws {BudgetExhaustedError} the first round cannot be covered (no node called)
 * @throws {LockBusyError} | {QuorumError} the last round's failure once waiting is over
 * @throws the `signal`'s reason when aborted (grants made meanwhile are released)
 */
export async function acquireLoop(core: LockCore, key: string, call: ResolvedCall): Promise<Grant> {
  const { nodes, options } = core;
  const n = nodes.length;
  const keys = core.keys(key);
  const { lease, budget, signal } = call;
  const waitUntil = performance.now() + call.wait;
  const roundCost = options.fencing && n > 1 ? 2 * n : n;
  let lastError: LockError | undefined;
  let lastWhy: string | undefined;

  for (let attempt = 0; ; attempt++) {
    const ttl = budget === undefined ? lease : budget.ttl(lease);
    const shortfall =
      budget === undefined ? undefined : budgetShortfall(core, budget, ttl, roundCost + n);
    if (shortfall !== undefined) {
      if (lastError === undefined) throw shortfall;
      throw failureOf(core, key, lastError.outcomes, lastWhy, shortfall);
    }
    const token = newToken();
    const timeoutMs = core.timeoutFor(ttl);
    const round = await core.acquireRound(keys, token, ttl, timeoutMs, budget);
    let outcomes = round.outcomes;
    let why: string | undefined;
    // A done marker on any node that answered means the job of this key finished: never grant
    // it, even when the other nodes would make a majority (its marker may be on a minority only).
    let ok = round.ok && !outcomes.some(isDone);
    let fence: number | undefined;
    if (ok && options.fencing) {
      fence = Math.max(0, ...round.values.values());
      if (n > 1) {
        // Raise every node, not only the granting ones: raising is a max (always safe), it covers
        // a granting node still in flight, and any later majority meets a majority of raised
        // nodes. Success needs a majority of raises.
        const raise = await core.raiseRound(nodes, keys, fence, timeoutMs, budget);
        if (!raise.ok) {
          ok = false;
          outcomes = raise.outcomes;
          why = "the fence could not be raised on a majority";
        }
      }
    }
    const durationMs = performance.now() - round.startedAt;
    if (signal?.aborted) {
      // The caller gave up while this round ran: undo whatever it granted.
      await cleanup(core, round, keys, token, timeoutMs, budget);
      throw signal.reason;
    }
    if (ok) {
      const valid = validity(ttl, durationMs, options.driftFactor);
      if (isValidGrant(valid, options.minValidity)) {
        core.emit({ type: "acquire", key, attempt, result: "granted", durationMs, outcomes });
        const validUntil = round.startedAt + ttl - drift(ttl, options.driftFactor);
        return { key, keys, token, fence, lease, validUntil, timeoutMs, outcomes };
      }
      why ??= `validity ${Math.round(valid)} ms below minValidity after a ${Math.round(durationMs)} ms round`;
    }
    const busy = outcomes.some((o) => o.status === "held" || o.status === "done");
    const result = why === undefined && busy ? "busy" : ok ? "invalid" : "unavailable";
    core.emit({ type: "acquire", key, attempt, result, durationMs, outcomes });
    await cleanup(core, round, keys, token, timeoutMs, budget);
    if (signal?.aborted) throw signal.reason;
    lastError = failureOf(core, key, outcomes, why);
    lastWhy = why;
    const now = performance.now();
    if (now >= waitUntil) throw lastError;
    // A done marker is never released early: waiting helps only if it expires within the wait.
    const markers = outcomes.filter(isDone).map((o) => o.pttl ?? -1);
    if (markers.length > 0 && (markers.includes(-1) || Math.max(...markers) > waitUntil - now)) {
      throw lastError;
    }
    const freeIn = lastError instanceof LockBusyError ? lastError.retryAfter : undefined;
    const budgetLeft = budget === undefined ? Infinity : budget.remaining() - budget.reserve;
    const delay = Math.min(
      retryDelay(attempt, freeIn, options.retryDelay, options.retryDelayMax),
      waitUntil - now,
      Math.max(0, budgetLeft),
    );
    await sleep(delay, signal);
    if (signal?.aborted) throw signal.reason;
  }
}
