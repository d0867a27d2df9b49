import type { Budget } from "../budget";
import {
  BudgetExhaustedError,
  describeNodes,
  type ErrorSubject,
  isFailed,
  isRejected,
  isUnanswered,
  LockBusyError,
  type LockError,
  type NodeOutcome,
  QuorumError,
  withFix,
} from "../errors";
import type { Round } from "../quorum";
import { bestValidity, freeAfter } from "../quorum";
import type { LockCore } from "./core";
import { holdsOf } from "./holds";
import type { RoundSpec } from "./spec";
import { unref } from "./timing";
import type { LastLook, LocalLine } from "./wait/queue";

/** What one more round needs of a budget (see {@link budgetShortfall}). */
export interface RoundNeeds {
  /** The lease the round would grant, in ms. */
  readonly ttl: number;
  /** Subrequests to keep: the round's cost plus N for the release. */
  readonly requests: number;
  /** Ms to leave for the work (default: the budget's own reserve). */
  readonly reserve?: number;
}

/**
 * Why the budget cannot cover one more round, or `undefined` when it can. A round is only worth
 * starting when, after it, the grant would still be useful: beyond `reserve`, the time left must
 * cover the round at its slowest (one request timeout) plus `minValidity` before the lock's
 * signal aborts at the deadline; the TTL must allow `minValidity`; and `requests` subrequests
 * must be left (a round's cost plus N for the release). Without this, `budget.within(10)` would
 * grant a lock whose signal aborts before any work could start.
 *
 * @example
 * const shortfall = budgetShortfall(core, budget, { ttl, requests: roundCost + n });
 * if (shortfall !== undefined) throw shortfall;
 */
export function budgetShortfall(
  core: LockCore,
  budget: Budget,
  { ttl, requests, reserve = budget.reserve }: RoundNeeds,
): BudgetExhaustedError | undefined {
  const remaining = budget.remaining();
  const left = budget.remainingSubrequests();
  const { driftFactor, minValidity } = core.options;
  const useful = core.timeoutFor(ttl) + Math.max(1, minValidity);
  let why: string | undefined;
  if (remaining - reserve <= 0) {
    why = `${Math.round(remaining)} ms left, ${reserve} ms reserved for the work`;
  } else if (remaining - reserve < useful) {
    why = `${Math.round(remaining)} ms left${reserve > 0 ? ` (${reserve} ms reserved for the work)` : ""}; a useful grant needs ${useful} ms: a round of up to ${core.timeoutFor(ttl)} ms plus minValidity (${minValidity} ms)`;
  } else if (bestValidity(ttl, driftFactor) < Math.max(1, minValidity)) {
    why = `a ${ttl} ms grant could not reach minValidity (${minValidity} ms)`;
  } else if (left < requests) {
    why = `${left} subrequests left, ${requests} needed (the round and what ends it)`;
  }
  return why === undefined
    ? undefined
    : new BudgetExhaustedError(`budget exhausted: ${why}`, remaining, left);
}

/**
 * Discard a failed round's token on every node that may have placed it (timeouts and errors
 * included): DISCARD deletes it where it is (a resume's undo puts the ticket's token back) and
 * leaves a tombstone for the round's TTL, so a request of the round that runs there later — it
 * timed out on the client and the server ran it afterwards, or it was re-sent — places nothing
 * (docs/SAFETY.md §2, L3); it lives for the round's TTL (`spec.ttl`). Without the tombstone such
 * a late request would place the token after its cleanup and block the key, held by nobody, for
 * the whole TTL.
 *
 * Only the nodes that granted are awaited: they just answered, so it is quick, and it must land
 * before the next round. A node that timed out or failed is discarded in the background, and one
 * still in flight once its request answered (if it may have granted): waiting on them would let
 * one slow node slow every failed acquire. The next acquire on such a node waits for that
 * discard first (`LockCore` orders them per node and key). A resume's undo (`restore`: the
 * ticket's token, put back wherever the round's fresh token is instead of deleting it) waits for
 * every node, so that a redelivery of the ticket that comes after the failure finds it put back.
 * `round` may cover some nodes only (a probe).
 *
 * @returns whether every node that may hold the token answered its discard (the round's token is
 *   gone, or the ticket's token back, everywhere)
 * @example
 * await cleanup(core, round, spec);
 */
export async function cleanup(
  core: LockCore,
  round: Round<number>,
  spec: RoundSpec,
  restore?: string,
): Promise<boolean> {
  const holds = holdsOf(round);
  const nodeOf = (o: NodeOutcome) => core.nodes[o.index] ?? [];
  const granted = round.outcomes.filter((o) => o.status === "ok").flatMap(nodeOf);
  const others = round.outcomes
    .filter((o) => o.status !== "ok" && holds[o.index] !== false)
    .flatMap(nodeOf);
  const answered = (r: Round<unknown>) =>
    r.outcomes.every((o) => o.status === "ok" || o.status === "absent" || o.status === "held");
  if (restore !== undefined) {
    const nodes = [...granted, ...others];
    if (nodes.length === 0) return true;
    const scope = { nodes, holds, restore };
    return answered(await core.discardRound(spec, scope));
  }
  let confirmed = true;
  if (others.length > 0) {
    confirmed = false;
    const scope = { nodes: others, holds };
    void core.discardRound(spec, scope).catch(() => {});
  }
  if (granted.length > 0) {
    const scope = { nodes: granted };
    const done = await core.discardRound(spec, scope);
    confirmed &&= answered(done);
  }
  return confirmed;
}

export const isDone = (o: NodeOutcome): boolean => o.status === "done";

/**
 * The error for a failed look, from its outcomes and its own reason (`why`), if any
 * (docs/SAFETY.md §6, "What a caller is told, and when it stops"):
 *
 * - busy whenever a node holds a done marker (a finished `once()` job keeps its key until the
 *   marker expires; `retryAfter` = the marker's PTTL);
 * - busy when the nodes that refused because another caller holds the key rule out a majority on
 *   their own, or when a probe (`outcomes` covering some nodes only, none failed) found it held;
 * - otherwise a `QuorumError`: failures (and nodes still pending, which are unknown, not busy)
 *   decided the round, or it failed for a reason of its own (`why`). Its message names every node
 *   that answered against it, with the reason in words, a configuration fault (rejected tokens)
 *   first.
 */
export function failureOf(
  core: LockCore,
  key: string,
  { outcomes, why, subject }: LastLook & { readonly subject?: ErrorSubject },
  cause?: unknown,
): LockError {
  const n = core.nodes.length;
  const held = outcomes.filter((o) => o.status === "held");
  const unanswered = outcomes.filter(isUnanswered).length;
  const options = cause === undefined ? { outcomes, subject } : { outcomes, subject, cause };
  const markers = outcomes.filter(isDone).map((o) => o.pttl ?? -1);
  if (markers.length > 0) {
    const kept = markers.filter((p) => p >= 0);
    const retryAfter = kept.length > 0 ? Math.max(...kept) : core.options.retryDelayMax;
    return new LockBusyError(key, retryAfter, options);
  }
  const probe = outcomes.length < n && unanswered === 0;
  if (why === undefined && held.length > 0 && (held.length > n - core.quorum || probe)) {
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
  const failed = outcomes.filter(isFailed).length;
  const summary =
    why ??
    `no majority (${core.quorum} of ${n} nodes needed; ${failed} failed, ${held.length} held)`;
  const nodes = describeNodes(outcomes);
  return new QuorumError(
    key,
    withFix(outcomes, nodes === "" ? summary : `${summary}: ${nodes}`),
    options,
  );
}

/**
 * The lock's failure for the outcomes of a look on `key` (no reason of its own): what a give-up
 * reports, and the failure of {@link settledFailure} for a lock.
 *
 * @example
 * throw lockFailure(core, key)(round.outcomes);
 */
export const lockFailure =
  (core: LockCore, key: string) =>
  (outcomes: readonly NodeOutcome[], cause?: unknown): LockError =>
    failureOf(core, key, { outcomes, why: undefined }, cause);

/**
 * The failure of a look to give up with, once its nodes still pending have answered: a round is
 * decided as soon as a majority is out of reach, so a node that failed at once beside a holder
 * decides it before the second holder answers — a `QuorumError` for a key held on a majority of
 * live nodes. The README promises a busy key never reads as an outage while a majority answers in
 * time, so a `QuorumError` with nodes pending waits for their answers (at most `last.timeoutMs`,
 * their request timeout) and becomes the `LockBusyError` they show, if they do. Other errors, and a
 * look with no node pending, are returned as they are.
 *
 * @example
 * const last = { round, why, timeoutMs };
 * throw tries.giveUp(await settledFailure(lockFailure(core, key), last, refused.error));
 */
export async function settledFailure(
  failure: (outcomes: readonly NodeOutcome[], cause: unknown) => LockError,
  last: {
    readonly round: Pick<Round<unknown>, "settled">;
    readonly why?: string | undefined;
    /** The round's request timeout: no answer comes later. */
    readonly timeoutMs: number;
  },
  error: LockError,
): Promise<LockError> {
  const pending = error.outcomes.some((o) => o.status === "pending");
  if (!(error instanceof QuorumError) || !pending || last.why !== undefined) return error;
  const outcomes = await new Promise<readonly NodeOutcome[] | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), last.timeoutMs);
    unref(timer);
    void last.round.settled.then((answers) => {
      clearTimeout(timer);
      resolve(answers);
    });
  });
  if (outcomes === undefined) return error;
  const settled = failure(outcomes, error.cause);
  return settled instanceof LockBusyError ? settled : error;
}

/**
 * The nodes that rejected the token rule out a majority on their own: no retry can succeed, so
 * waiting stops at once (a wrong token is a configuration fault, not an outage).
 *
 * @example
 * if (tokensRuleOutMajority(core, outcomes)) throw lastError;
 */
export function tokensRuleOutMajority(core: LockCore, outcomes: readonly NodeOutcome[]): boolean {
  return outcomes.filter(isRejected).length > core.nodes.length - core.quorum;
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
  return failureOf(core, key, line.last);
}
