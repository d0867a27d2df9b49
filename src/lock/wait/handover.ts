import type { Budget } from "../../budget";
import type { NodeStatus } from "../../errors";
import type { RestNode } from "../../node";
import { fanOut, type NodeAnswer, type Round, roundTimer } from "../../quorum";
import { type CasReply, evalScript, HANDOVER, scriptKeys, tombstoneKey } from "../../scripts";
import { acquireAnswer, type LockCore, reservationFor, SHARED_TIMER_MAX_NODES } from "../core";
import { casStatus, type Holds, mayHold, NOT_THERE } from "../holds";
import type { AcquireSpec, Keys } from "../spec";
import type { NextRound } from "./queue";

/**
 * Waiting strategy 1, the local line: a release that hands the key to the first waiter in the
 * same requests. Keeps docs/SAFETY.md §3 "handover" (the next holder is granted like an acquire
 * round, with validity from before the first request) and §6 "Order across instances" (a room's
 * earlier waiters of other instances are served first, `SERVE_ROOM`).
 *
 * @module
 */

/** The grant a hand-over ends: its keys, token and `holds`, and the budget sending the requests. */
export interface Releasing {
  readonly keys: Keys;
  readonly token: string;
  readonly holds: Holds;
  /** The releasing caller's: charged for every request. */
  readonly budget: Budget | undefined;
}

/** What every node's part of one hand-over shares (see {@link handOn}). */
interface HandoverRequests {
  readonly core: LockCore;
  /** HANDOVER's KEYS and ARGV, built once for every node. */
  readonly keys: readonly string[];
  readonly args: string[];
  /** The next holder's plain acquire, where our token never was. */
  readonly acquire: AcquireSpec;
  /** The requests' shared timeout signal, if any. */
  readonly signal: AbortSignal | undefined;
}

const isOk = (status: NodeStatus): boolean => status === "ok";
const answered = (status: NodeStatus): boolean =>
  status === "ok" || status === "absent" || status === "held";

/**
 * Handover: release our grant (`from.token`, following `from.holds` like a release round) and
 * acquire the key for the next holder (`next`) in one request per node: the HANDOVER script where
 * our token may be, a plain acquire where it never was. Two views of the same requests:
 * `acquire`, decided like an acquire round (the next holder's look), and `release`, decided like
 * a release round (ours). Charged to `from.budget`: the releasing caller's, which sends the
 * requests.
 *
 * Mutual exclusion is that of a release followed by an acquire: each node sets the next token
 * only where our token was or the key was free, and the next holder needs a majority of those
 * grants, with its validity counted from before the first request went out. Fairness: a node
 * whose wait room has a waiter placed before the next holder (another instance's caller) reserves
 * the key for that waiter instead (HANDOVER's `SERVE_ROOM`), so local callers cannot keep a key
 * from the others by handing it on among themselves.
 *
 * @example
 * const { keys, token, holds } = grant;
 * const { acquire, release } = handoverRound(core, { keys, token, holds, budget }, next);
 */
export function handoverRound(
  core: LockCore,
  from: Releasing,
  next: NextRound,
): { acquire: Promise<Round<number>>; release: Promise<Round<CasReply>> } {
  // The next holder's validity counts from here: a request may run as soon as it is sent.
  const startedAt = performance.now();
  const { keys, token, holds, budget } = from;
  const { fencing } = core.options;
  // The next holder's entry and place let HANDOVER serve a room's earlier waiters first.
  const args = HANDOVER.args({
    token,
    next: { token: next.token, ttl: next.ttl, fencing },
    entry: next.entry,
    now: Date.now(),
    listenMs: reservationFor(next.timeoutMs),
  });
  // The next holder's tombstone: a HANDOVER landing after its failed round's cleanup places
  // nothing (docs/SAFETY.md §2, L3).
  const withVoid = scriptKeys(keys, tombstoneKey(keys, next.token));
  const { token: nextToken, ttl, timeoutMs, waiter } = next;
  const acquire: AcquireSpec = { keys, token: nextToken, ttl, timeoutMs, budget, waiter };
  // One timer for all of these requests (they serve two rounds here).
  const timer = core.nodes.length <= SHARED_TIMER_MAX_NODES ? roundTimer(timeoutMs) : undefined;
  const shared: HandoverRequests = { core, keys: withVoid, args, acquire, signal: timer?.signal };
  const sent = core.nodes.map((node) => handOn(shared, node, holds[node.index] ?? true));
  if (timer !== undefined) void Promise.allSettled(sent).then(timer.clear);
  // Each view only waits on the requests already under way.
  const answer = (node: RestNode) => sent[node.index] as Promise<HandoverAnswers>;
  return {
    acquire: fanOut(core.nodes, async (node) => (await answer(node)).acquire, {
      quorum: core.quorum,
      isFor: isOk,
    }).then((round) => ({ ...round, startedAt })),
    release: fanOut(core.nodes, async (node) => (await answer(node)).release, {
      quorum: core.quorum,
      isFor: answered,
    }),
  };
}

/** One node's handover: the next holder's acquire and our release. */
interface HandoverAnswers {
  readonly acquire: NodeAnswer<number>;
  readonly release: NodeAnswer<CasReply>;
}

/** One node's part of {@link handoverRound}, where our token may be per `hold`. */
async function handOn(
  requests: HandoverRequests,
  node: RestNode,
  hold: boolean | Promise<boolean>,
): Promise<HandoverAnswers> {
  const { core, acquire: next, signal } = requests;
  // Our other releases of this key in flight on this node go first; this one is tracked too.
  const { keys, timeoutMs, budget } = next;
  const after = core.order.after(node.index, core.lockKeysOf(keys));
  const ended = core.order.track(node.index, core.lockKeysOf(keys), 2 * timeoutMs);
  try {
    const waited = hold !== true;
    // The round's signal fits a request sent at once only; a later one gets a timer of its own.
    const shared = waited ? undefined : signal;
    if (waited && !(await mayHold(hold, timeoutMs))) {
      const acquire = await core.acquireOn(node, next, { signal: shared, after });
      return { acquire, release: NOT_THERE };
    }
    let resent = false;
    const onRetry = () => {
      resent = true;
    };
    // Like a release: re-sent after a broken connection whenever the budget allows.
    const options = { timeoutMs, budget, after, onRetry, signal: shared };
    const reply = await evalScript(node, HANDOVER, requests.keys, requests.args, options);
    // "Absent" right after re-sending a request whose connection broke: the first one released.
    const released = resent && reply.released === 0 ? 1 : reply.released;
    return {
      acquire: acquireAnswer(reply.acquire, core.options.fencing),
      release: { status: casStatus(released), value: released },
    };
  } finally {
    ended();
  }
}
