import type { LockError, NodeOutcome } from "../errors";
import type { Round } from "../quorum";
import { drift } from "../quorum";
import type { Keys, LockCore } from "./core";
import {
  budgetShortfall,
  cleanup,
  isDone,
  tokensRuleOutMajority,
  type unheardFailure,
} from "./failure";
import { type Holds, holdsOf } from "./holds";
import type { KeySet } from "./keyset";
import { judge, type Verdict } from "./look";
import type { ResolvedCall } from "./options";
import type { RoundSpec, RoundTerms } from "./spec";
import { newToken } from "./timing";
import { combinedWaiter } from "./wait/combined";
import type { LocalHold } from "./wait/queue";
import { handMsFor, QueuedWait } from "./wait/queued";
import { type Tries, triesOf } from "./wait/tried";
import type { Waiter } from "./wait/waiter";

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
  /**
   * The validity comes from a hand-off (the queue, P3): it lasts the hand-off TTL, not the lease.
   * The handle extends it to the lease halfway through, with or without auto-extension.
   */
  readonly short?: true;
  /**
   * A queued call's grant (one token for all its looks): its release writes the token's
   * tombstone for this many ms, so a look of the call that runs late places nothing (L3), and it
   * is released to the nodes, never handed over in the same requests.
   */
  readonly closes?: number;
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
  const waitUntil = began + call.wait;
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
        return await queuedGrant(core, target, call, queue);
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
      if (now >= waitUntil || hopeless) throw tries.giveUp(refused.error);
      busyLast = result === "busy" && !outcomes.some(isDone) ? round : undefined;
      if (!(waiter.queues && busyLast !== undefined)) await waiter.pause(refused);
    }
  } finally {
    waiter.stop();
  }
}

/** What a call waiting in the nodes' queues brings from the acquire loop (see {@link queuedGrant}). */
interface QueueCall {
  readonly keys: Keys;
  /** Epoch ms of the call. */
  readonly place: number;
  readonly waitUntil: number;
  /** Sizes the next look (its token is not used: a queued call has one token of its own). */
  readonly size: () => RoundTerms | LockError;
  /** The failure to report when the budget cannot cover the first look (the loop's last). */
  readonly short: (shortfall: LockError) => LockError;
  /** Called at each look: the call is alive, first in its local line. */
  readonly alive: () => void;
}

/**
 * Wait in the nodes' queues (docs/SAFETY.md §2 P1–P4, §6 "The queue"): one token for the call,
 * a stream on every node for its hand-offs, and a {@link QueuedWait} that counts placements until
 * a majority is counted; with fencing on N > 1 the fence is then raised on a majority (F2), and
 * the grant's validity is the tally's (E2 for the queue). The call leaves the queues of the nodes
 * it was not counted on. A call that ends without a grant discards its token everywhere (a node
 * may have handed it the key meanwhile) and writes its tombstone (L3): nothing of it is placed
 * or registered after that.
 */
async function queuedGrant(
  core: LockCore,
  target: KeySet,
  call: ResolvedCall,
  queue: QueueCall,
): Promise<Grant> {
  const { nodes, options } = core;
  const { keys, place, waitUntil, alive, short } = queue;
  const { budget, lease } = call;
  const key = target.name;
  const token = newToken();
  const began = performance.now();
  const size = () => {
    alive();
    return queue.size();
  };
  const plan = { key, keys, place, token, waitUntil, size, short };
  const wait = new QueuedWait(core, call, plan);
  const room = (keys[0] as Keys[number]).room;
  const listening = core.streams.listen(nodes, room, token, (index, h) => wait.handed(index, h));
  let granted = false;
  let last: RoundTerms | undefined;
  try {
    await listening.opened(budget, core.timeoutFor(lease));
    for (;;) {
      const queued = await wait.run();
      last = queued.terms;
      const { timeoutMs } = queued.terms;
      // The fence raised on a majority: a raise's reply above it (a node whose counter is
      // higher) is on that node only, and a later majority may issue below it (F2).
      const fence = queued.fence;
      if (options.fencing && nodes.length > 1) {
        const raise = await core.raiseRound(nodes, { keys, token, timeoutMs, budget }, fence);
        if (!raise.ok) {
          wait.postpone(raise.outcomes);
          continue;
        }
        if (queued.validUntil - performance.now() < options.minValidity) {
          wait.postpone(queued.outcomes);
          continue;
        }
      }
      granted = true;
      const counted = new Set(queued.nodes);
      const others = nodes.filter((node) => !counted.has(node.index));
      core.leave(others, { keys, token, timeoutMs, budget });
      const durationMs = performance.now() - began;
      const { outcomes, validUntil, looks } = queued;
      core.emit({ type: "acquire", key, attempt: looks, result: "granted", durationMs, outcomes });
      return {
        key,
        names: target.keys,
        keys,
        token,
        fence: options.fencing ? fence : undefined,
        lease,
        validUntil,
        timeoutMs,
        outcomes,
        // Any node may have handed us the key (we were in every queue): a release asks them all.
        holds: nodes.map(() => true),
        local: core.lines.of(core.lineKey(keys)).hold(validUntil),
        closes: Math.max(queued.terms.ttl, handMsFor(queued.terms.ttl, timeoutMs)),
        ...(validUntil - performance.now() < queued.terms.ttl / 2 ? { short: true as const } : {}),
      };
    }
  } finally {
    listening.close();
    if (!granted) {
      const terms = last ?? { token, ttl: lease, timeoutMs: core.timeoutFor(lease) };
      const { ttl, timeoutMs } = terms;
      const spec = {
        keys,
        token,
        ttl: Math.max(ttl, handMsFor(ttl, timeoutMs)),
        timeoutMs,
        budget,
      };
      void core.discardRound(spec, { nodes }).catch(() => {});
    }
  }
}

/** A done marker is never released early: waiting helps only if it expires within the wait. */
function markerOutlasts(outcomes: readonly NodeOutcome[], waitLeft: number): boolean {
  const markers = outcomes.filter(isDone).map((o) => o.pttl ?? -1);
  return markers.length > 0 && (markers.includes(-1) || Math.max(...markers) > waitLeft);
}
