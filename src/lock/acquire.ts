import type { LockError, NodeOutcome } from "../errors";
import type { Round } from "../quorum";
import { drift } from "../quorum";
import type { LockCore } from "./core";
import {
  budgetShortfall,
  cleanup,
  isDone,
  lockFailure,
  settledFailure,
  tokensRuleOutMajority,
  type unheardFailure,
} from "./failure";
import type { Grant } from "./grant";
import { holdsOf } from "./holds";
import type { KeySet } from "./keyset";
import { judge, type Verdict } from "./look";
import { type ResolvedCall, waitEnd } from "./options";
import { queuedGrant } from "./queued-grant";
import type { RoundSpec, RoundTerms } from "./spec";
import { newToken } from "./timing";
import { combinedWaiter } from "./wait/combined";
import { type Tries, triesOf } from "./wait/tried";
import type { Waiter } from "./wait/waiter";

/** A round judged granted (see {@link grantOf}). */
export interface Won {
  readonly round: Round<number>;
  readonly verdict: Pick<Verdict, "fence" | "outcomes">;
  /** The round's token, TTL and request timeout. */
  readonly terms: RoundTerms;
  /** The lease asked for (the TTL may be less: capped by the budget). */
  readonly lease: number;
  /**
   * `false` for a resume: a late RESUME reads the ticket's record of failed resumes, not the
   * tombstone a release writes (docs/SAFETY.md §2, L3), so the grant carries no `unheard`.
   */
  readonly tombstones?: false;
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
  const failed = new Set<number>();
  const holds = holdsOf(round, failed);
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
    ...(won.tombstones === false ? {} : { unheard: { ttl, failed } }),
  };
}

/**
 * The acquire loop (docs/SAFETY.md §3, "acquire round, probe"): fresh token per round, one acquire
 * round on all nodes (or a probe), a fence raise when fencing on N > 1, validity check; on failure
 * discard the token everywhere it may have been placed, then wait and retry within `wait` and the
 * budget. Each pass reads: wait for a turn, look, judge, then grant, or record the failure
 * ({@link Tries}) and pause.
 *
 * How a caller waits is its {@link Waiter}'s alone (`src/lock/wait/`: today the local line, the
 * wait room and pacing, combined in {@link combinedWaiter}). None of it decides who holds the
 * lock: every grant is an acquire round — this loop's look or one a release handed over — judged
 * by {@link judge}.
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
  const n = core.nodes.length;
  const key = target.name;
  const keys = core.keys(target.keys);
  const { lease, budget, signal } = call;
  const began = performance.now();
  const waitUntil = waitEnd(call, began, core.timeoutFor(lease));
  // A round (and a fence raise when fencing on N > 1), then the release.
  const spare = (core.options.fencing && n > 1 ? 2 * n : n) + n;
  // The round this caller runs next, sized now (a handover sizes it when the release runs).
  const size = (): RoundTerms | LockError => {
    const ttl = budget === undefined ? lease : budget.ttl(lease);
    const shortfall = budget && budgetShortfall(core, budget, { ttl, requests: spare });
    return shortfall ?? { token: newToken(), ttl, timeoutMs: core.timeoutFor(ttl) };
  };
  const plan = { key, keys, began, waitUntil, spare, size };
  const waiter: Waiter = combinedWaiter(core, call, plan);
  const tries = triesOf(core, key, began);

  // The last look found the key held by another caller: a caller that queues waits in the nodes'
  // queues from its next turn on (a look that failed for other reasons is retried as before).
  let busyLast: Round<number> | undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      const handed = await waiter.turn(tries.failure);
      if (handed === undefined && waiter.queues && busyLast !== undefined) {
        // The refused look's last requests answer first: on Workers a request has six
        // connections waiting for headers, and the N streams are about to open.
        await busyLast.settled;
        const { short } = tries;
        const queue = { keys, place: waiter.place, waitUntil, size, short, alive: waiter.stand() };
        const from = { began, looked: tries.looked() };
        return await queuedGrant(core, target, call, { ...queue, ...from });
      }
      const next = handed?.next ?? size();
      if (next instanceof Error) throw tries.short(next);
      const { token, ttl, timeoutMs } = next;
      const spec: RoundSpec = { keys, token, ttl, timeoutMs, budget };
      const round = await (handed?.round ?? waiter.look(spec));
      const verdict = await judge(core, round, spec);
      const { outcomes, why, durationMs, busy } = verdict;
      if (signal?.aborted) {
        // The caller gave up while this round ran: undo whatever it granted.
        await cleanup(core, round, spec);
        throw signal.reason;
      }
      if (verdict.granted) {
        core.emit({ type: "acquire", key, attempt, result: "granted", durationMs, outcomes });
        return grantOf(core, target, { round, verdict, terms: next, lease });
      }
      const result =
        why === undefined && busy ? "busy" : verdict.invalid ? "invalid" : "unavailable";
      core.emit({ type: "acquire", key, attempt, result, durationMs, outcomes });
      await cleanup(core, round, spec);
      if (signal?.aborted) throw signal.reason;
      const refused = tries.refused(verdict);
      const now = performance.now();
      // A wrong token on enough nodes is a configuration fault: no retry can fix it.
      const hopeless =
        markerOutlasts(outcomes, waitUntil - now) || tokensRuleOutMajority(core, outcomes);
      if (now >= waitUntil || hopeless) {
        const last = { round, why, timeoutMs };
        throw tries.giveUp(await settledFailure(lockFailure(core, key), last, refused.error));
      }
      busyLast = result === "busy" && !outcomes.some(isDone) ? round : undefined;
      if (!(waiter.queues && busyLast !== undefined)) await waiter.pause(refused);
    }
  } finally {
    waiter.stop();
  }
}

/** A done marker is never released early: waiting helps only if it expires within the wait. */
function markerOutlasts(outcomes: readonly NodeOutcome[], waitLeft: number): boolean {
  const markers = outcomes.filter(isDone).map((o) => o.pttl ?? -1);
  return markers.length > 0 && (markers.includes(-1) || Math.max(...markers) > waitLeft);
}
