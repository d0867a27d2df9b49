import { isLockBusyError, LockBusyError, type LockError, type NodeOutcome } from "../errors";
import type { Round } from "../quorum";
import { drift } from "../quorum";
import type { Keys, LockCore } from "./core";
import {
  budgetShortfall,
  cleanup,
  failureOf,
  isDone,
  tokensRuleOutMajority,
  unheardFailure,
} from "./failure";
import { type Holds, holdsOf } from "./holds";
import type { KeySet } from "./keyset";
import { judge, look, type Verdict } from "./look";
import type { ResolvedCall } from "./options";
import type { RoundSpec, RoundTerms } from "./spec";
import { newToken } from "./timing";
import { Pacing } from "./wait/pacing";
import type { LineSpot, LocalHold, LocalLine, NextRound } from "./wait/queue";
import { RoomSeat } from "./wait/room";
import { afterAttempts } from "./wait/tried";
import { type HandedRound, waitTurn } from "./wait/turn";

/** A successful acquisition, before it is wrapped in a `Lock`. */
export interface Grant {
  /** The lock's name (its key, or its keys joined: see {@link KeySet}). */
  readonly key: string;
  /** The keys as the user gave them (sorted, without duplicates; without the prefix). */
  readonly names: readonly string[];
  readonly keys: Keys;
  readonly token: string;
  readonly fence: number | undefined;
  readonly lease: number;
  /** End of validity on the `performance.now()` clock. */
  readonly validUntil: number;
  readonly timeoutMs: number;
  readonly outcomes: readonly NodeOutcome[];
  /**
   * Per node: whether our token may be there (see {@link holdsOf}). Release, handover and extend
   * follow it, so none of them overtakes an acquire request still in flight on a slow node.
   */
  readonly holds: Holds;
  /**
   * This grant in its key's line: `end()` tells the callers of the same `Locks` waiting for the key
   * that it ended (released, completed, lost: the first of them asks at once; idempotent), and
   * `renew()` moves its validity end on extension.
   */
  readonly local: LocalHold;
}

/** A round judged granted (see {@link grantOf}). */
export interface Won {
  readonly round: Round<number>;
  readonly verdict: Pick<Verdict, "fence" | "outcomes">;
  /** The round's token, TTL and request timeout. */
  readonly terms: RoundTerms;
  /** The lease asked for (the TTL may be less: capped by the budget). */
  readonly lease: number;
}

/**
 * The grant of a round judged granted (acquire's, a hand-over's or resume's): validity counted from
 * the round's start (docs/SAFETY.md §3, E2), and held in its line before anyone leaves it.
 *
 * @example
 * if (verdict.granted) return grantOf(core, target, { round, verdict, terms: next, lease });
 */
export function grantOf(core: LockCore, target: KeySet, won: Won): Grant {
  const keys = core.keys(target.keys);
  const { round, verdict, terms, lease } = won;
  const { token, ttl, timeoutMs } = terms;
  const validUntil = round.startedAt + ttl - drift(ttl, core.options.driftFactor);
  // Counted as held before leaving the line, so the next in line waits for its end.
  const local = core.lines.of(core.lineKey(keys)).hold(validUntil);
  const { fence, outcomes } = verdict;
  const holds = holdsOf(round);
  return {
    key: target.name,
    names: target.keys,
    keys,
    token,
    fence,
    lease,
    validUntil,
    timeoutMs,
    outcomes,
    holds,
    local,
  };
}

/**
 * The acquire loop (docs/SAFETY.md §3, "acquire round, probe"): fresh token per round, one acquire
 * round on all nodes (or a probe), a fence raise when fencing on N > 1, validity check; on failure
 * discard the token everywhere it may have been placed, then wait and retry within `wait` and the
 * budget. Waiting combines three strategies, each its own unit:
 *
 * - the local line ({@link waitTurn}): callers of one `Locks` instance line up per key; only the
 *   first asks the nodes, nobody asks while one of them holds the key, and a release hands the key
 *   to the first in line in the same requests (HANDOVER);
 * - the wait room ({@link RoomSeat}): every look of a caller waiting for one key registers it on
 *   the nodes that refuse it, so releases of all instances serve waiters in the order of their
 *   calls (pollers only by releases with local waiters: docs/SAFETY.md §6);
 * - pacing ({@link Pacing}): backoff and probes while polling, or wake-ups while listening.
 *
 * None of them decides who holds the lock: every grant is an acquire round judged by
 * {@link judge}.
 *
 * @throws {BudgetExhaustedError} the first round cannot be covered (no node called)
 * @throws {LockBusyError} | {QuorumError} the last look's failure once waiting is over (for a
 *   caller that waited in line without asking: see {@link unheardFailure})
 * @throws the `signal`'s reason when aborted (grants made meanwhile are released)
 */
export async function acquireLoop(
  core: LockCore,
  target: KeySet,
  call: ResolvedCall,
): Promise<Grant> {
  const { nodes, options } = core;
  const n = nodes.length;
  const key = target.name;
  const keys = core.keys(target.keys);
  const { lease, budget, signal } = call;
  const began = performance.now();
  const waitUntil = began + call.wait;
  // Waiting in line also stops where the budget would leave no more than its reserve.
  const lineUntil =
    budget === undefined ? waitUntil : Math.min(waitUntil, budget.deadline - budget.reserve);
  const roundCost = options.fencing && n > 1 ? 2 * n : n;
  // Longest a live first waiter goes without a sign of life: a retry sleep plus a look (probe,
  // round, fence raise, cleanup: a request timeout each).
  const patience = options.retryDelayMax + 4 * core.timeoutFor(lease);
  const seat = new RoomSeat(core, call, keys, { began, until: lineUntil });
  const pacing = new Pacing(core, keys);
  let lastError: LockError | undefined;
  let lastWhy: string | undefined;
  // The last look on every node: what a busy probe's error reports as the cluster's state.
  let lastRound: { outcomes: readonly NodeOutcome[]; why: string | undefined } | undefined;
  let looks = 0;
  // The failure to throw: after more than one look, it says how long and how often it tried.
  const giveUp = (error: LockError): LockError =>
    looks > 1 ? afterAttempts(error, looks, performance.now() - began) : error;
  let line: LocalLine | undefined;
  let spot: LineSpot | undefined;
  // The round this caller runs next, sized now (a handover sizes it when the release runs).
  const sizeNext = (): NextRound | undefined => {
    const ttl = budget === undefined ? lease : budget.ttl(lease);
    const needs = { ttl, requests: roundCost + n };
    if (budget !== undefined && budgetShortfall(core, budget, needs) !== undefined) {
      return undefined;
    }
    const timeoutMs = core.timeoutFor(ttl);
    return { token: newToken(), ttl, timeoutMs, waiter: seat.registration, entry: seat.entry };
  };

  try {
    for (let attempt = 0; ; attempt++) {
      let handed: HandedRound | undefined;
      if (
        call.wait > 0 &&
        (spot !== undefined || core.lines.peek(core.lineKey(keys))?.idle === false)
      ) {
        line ??= core.lines.of(core.lineKey(keys));
        spot ??= line.join(patience, seat.entry?.place);
        if (!line.isTurn(spot)) {
          const waited = await waitTurn(line, spot, { until: lineUntil, signal, next: sizeNext });
          if (typeof waited === "boolean") {
            if (signal?.aborted) throw signal.reason;
            if (!waited)
              throw lastError === undefined ? unheardFailure(core, key, line) : giveUp(lastError);
          } else {
            handed = waited;
          }
          pacing.turn();
        }
      }
      let next = handed?.next;
      if (next === undefined) {
        const ttl = budget === undefined ? lease : budget.ttl(lease);
        const needs = { ttl, requests: roundCost + n };
        const shortfall = budget === undefined ? undefined : budgetShortfall(core, budget, needs);
        if (shortfall !== undefined) {
          if (lastError === undefined) throw shortfall;
          const last = { outcomes: lastError.outcomes, why: lastWhy };
          throw giveUp(failureOf(core, key, last, shortfall));
        }
        next = { token: newToken(), ttl, timeoutMs: core.timeoutFor(ttl) };
      }
      const { token, ttl, timeoutMs } = next;
      const spec: RoundSpec = { keys, token, ttl, timeoutMs, budget };
      const round = await (handed?.round ??
        look(core, { ...spec, waiter: seat.registration }, pacing.probeAt));
      const verdict = await judge(core, round, spec);
      looks++;
      const { outcomes, why, durationMs, busy } = verdict;
      if (signal?.aborted) {
        // The caller gave up while this round ran: undo whatever it granted, and let the seat
        // know where a busy round registered it, so that stopping leaves those rooms too.
        if (busy) seat.refused(round, outcomes);
        await cleanup(core, round, spec);
        throw signal.reason;
      }
      if (verdict.granted) {
        pacing.granted();
        seat.granted(round, spec);
        core.emit({ type: "acquire", key, attempt, result: "granted", durationMs, outcomes });
        return grantOf(core, target, { round, verdict, terms: next, lease });
      }
      if (busy) seat.refused(round, outcomes);
      const result =
        why === undefined && busy ? "busy" : verdict.invalid ? "invalid" : "unavailable";
      core.emit({ type: "acquire", key, attempt, result, durationMs, outcomes });
      await cleanup(core, round, spec);
      if (signal?.aborted) throw signal.reason;
      const failedProbe = verdict.probed && !busy;
      if (!verdict.probed) lastRound = { outcomes, why };
      if (!failedProbe || lastError === undefined) {
        lastError = failureOf(core, key, { outcomes, why });
        lastWhy = why;
        if (verdict.probed && lastRound !== undefined && isLockBusyError(lastError)) {
          // One node's answer says nothing of a majority: report the cluster as last seen whole.
          const { retryAfter } = lastError;
          lastError = new LockBusyError(key, retryAfter, {
            outcomes,
            lastRound: lastRound.outcomes,
          });
        }
      }
      const now = performance.now();
      // A wrong token on enough nodes is a configuration fault: no retry can fix it.
      const hopeless =
        markerOutlasts(outcomes, waitUntil - now) || tokensRuleOutMajority(core, outcomes);
      if (now >= waitUntil || hopeless) throw giveUp(lastError);
      const refusal = { outcomes, error: lastError, failedProbe, busy };
      const delay = pacing.plan(refusal, waitUntil, budget, roundCost + n);
      // From the first failed look on, wait in line with the other callers of this instance.
      line ??= core.lines.of(core.lineKey(keys));
      spot ??= line.join(patience, seat.entry?.place);
      line.seen(spot);
      // Callers waiting in line behind this one report the cluster, not a probe's one node.
      line.last =
        verdict.probed && lastRound !== undefined
          ? lastRound
          : { outcomes: lastError.outcomes, why: lastWhy };
      await pacing.pause(line, spot, { delay, signal, member: seat.entry?.member });
      if (signal?.aborted) throw signal.reason;
    }
  } finally {
    if (spot !== undefined) line?.leave(spot);
    pacing.close();
    seat.stopped(keys);
  }
}

/** A done marker is never released early: waiting helps only if it expires within the wait. */
function markerOutlasts(outcomes: readonly NodeOutcome[], waitLeft: number): boolean {
  const markers = outcomes.filter(isDone).map((o) => o.pttl ?? -1);
  return markers.length > 0 && (markers.includes(-1) || Math.max(...markers) > waitLeft);
}
