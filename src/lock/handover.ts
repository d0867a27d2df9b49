import type { Budget } from "../budget";
import type { NodeStatus } from "../errors";
import type { RestNode } from "../node";
import { fanOut, type NodeAnswer, type Round, roundTimer } from "../quorum";
import { type CasReply, evalScript, HANDOVER } from "../scripts";
import {
  acquireAnswer,
  type Keys,
  type LockCore,
  reservationFor,
  SHARED_TIMER_MAX_NODES,
} from "./core";
import { casStatus, type Holds, mayHold, NOT_THERE } from "./holds";
import type { NextRound } from "./queue";

/** One node's handover: the next holder's acquire and our release. */
interface Handed {
  readonly acquire: NodeAnswer<number>;
  readonly release: NodeAnswer<CasReply>;
}

const isOk = (status: NodeStatus): boolean => status === "ok";
const answered = (status: NodeStatus): boolean =>
  status === "ok" || status === "absent" || status === "held";

/**
 * Handover: release our grant (`token`, following `holds` like a release round) and acquire the
 * key for the next holder (`next`) in one request per node: the HANDOVER script where our token
 * may be, a plain acquire where it never was. Two views of the same requests: `acquire`, decided
 * like an acquire round (the next holder's look), and `release`, decided like a release round
 * (ours). Charged to `budget`: the releasing caller's, which sends the requests.
 *
 * Mutual exclusion is that of a release followed by an acquire: each node sets the next token
 * only where our token was or the key was free, and the next holder needs a majority of those
 * grants, with its validity counted from before the first request went out. Fairness: a node
 * whose wait room has a waiter placed before the next holder (another instance's caller) reserves
 * the key for that waiter instead (HANDOVER's `SERVE_ROOM`), so local callers cannot keep a key
 * from the others by handing it on among themselves.
 *
 * @example
 * const { acquire, release } = handoverRound(core, keys, grant.token, grant.holds, next, budget);
 */
export function handoverRound(
  core: LockCore,
  keys: Keys,
  token: string,
  holds: Holds,
  next: NextRound,
  budget: Budget | undefined,
): { acquire: Promise<Round<number>>; release: Promise<Round<CasReply>> } {
  // The next holder's validity counts from here: a request may run as soon as it is sent.
  const startedAt = performance.now();
  const fencing = core.options.fencing ? "1" : "0";
  const waiter = next.waiter ?? [];
  // HANDOVER takes the entry and its place (ARGV[5], ARGV[8]) to serve earlier waiters first.
  const [member = "", place = ""] = next.entry ?? [];
  const now = String(Date.now());
  const listenMs = String(reservationFor(next.timeoutMs));
  const both = [token, next.token, String(next.ttl), fencing, member, now, listenMs, place];
  const acquireArgs = [next.token, String(next.ttl), fencing, ...waiter];
  // One timer for all of these requests (they serve two rounds here).
  const timer =
    core.nodes.length <= SHARED_TIMER_MAX_NODES ? roundTimer(next.timeoutMs) : undefined;
  const sent = core.nodes.map((node) => {
    const hold = holds[node.index] ?? true;
    return handOn(core, node, keys, hold, both, acquireArgs, next, budget, timer?.signal);
  });
  if (timer !== undefined) void Promise.allSettled(sent).then(timer.clear);
  // Each view only waits on the requests already under way.
  const answer = (node: RestNode) => sent[node.index] as Promise<Handed>;
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

/** One node's part of {@link handoverRound}. */
async function handOn(
  core: LockCore,
  node: RestNode,
  keys: Keys,
  hold: boolean | Promise<boolean>,
  both: string[],
  acquireArgs: string[],
  next: NextRound,
  budget: Budget | undefined,
  signal: AbortSignal | undefined,
): Promise<Handed> {
  // Our other releases of this key in flight on this node go first; this one is tracked too.
  const { timeoutMs } = next;
  const after = core.order.after(node.index, core.lockKeysOf(keys));
  const ended = core.order.track(node.index, core.lockKeysOf(keys), 2 * timeoutMs);
  try {
    const waited = hold !== true;
    // The round's signal fits a request sent at once only; a later one gets a timer of its own.
    const shared = waited ? undefined : signal;
    if (waited && !(await mayHold(hold, timeoutMs))) {
      const acquire = await core.acquireOn(node, keys, acquireArgs, timeoutMs, budget, {
        signal: shared,
        after,
      });
      return { acquire, release: NOT_THERE };
    }
    let resent = false;
    const onRetry = () => {
      resent = true;
    };
    // Like a release: re-sent after a broken connection whenever the budget allows.
    const options = { timeoutMs, budget, after, onRetry, signal: shared };
    // The next holder's tombstone key: a HANDOVER landing after its failed round's cleanup
    // places nothing (docs/SAFETY.md, L3).
    const reply = await evalScript(node, HANDOVER, core.keysFor(keys, next.token), both, options);
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
