import type { LockError, NodeOutcome } from "../errors";
import type { Keys, LockCore } from "./core";
import type { Grant } from "./grant";
import type { KeySet } from "./keyset";
import type { ResolvedCall } from "./options";
import type { RoundTerms } from "./spec";
import { newToken } from "./timing";
import { lockSide } from "./wait/lock-side";
import { handMsFor, QueuedWait } from "./wait/queued";

/** What a call waiting in the nodes' queues brings from the acquire loop (see {@link queuedGrant}). */
export interface QueueCall {
  readonly keys: Keys;
  /** Epoch ms of the call. */
  readonly place: number;
  readonly waitUntil: number;
  /** Sizes the next look (its token is not used: a queued call has one token of its own). */
  readonly size: () => RoundTerms | LockError;
  /** The failure to report when the budget cannot cover the first look (the loop's last). */
  readonly short: (shortfall: LockError) => LockError;
  /** When the call began, and how many looks it made before it queued. */
  readonly began: number;
  readonly looked: number;
  /** Called at each look: the call is alive, first in its local line (with the look's outcomes). */
  readonly alive: (outcomes?: readonly NodeOutcome[]) => void;
}

/**
 * Wait in the nodes' queues (docs/SAFETY.md §2 P1–P4, §6 "The queue"): one token for the call,
 * a stream on every node for its hand-offs, and a {@link QueuedWait} with the lock's side
 * ({@link lockSide}: ACQUIRE looks, PASS, a `Tally`) that counts placements until a majority is
 * counted; with fencing on N > 1 the fence is then raised on a majority (F2), and
 * the grant's validity is the tally's (E2 for the queue). The call leaves the queues of the nodes
 * it was not counted on. A call that ends without a grant discards its token everywhere (a node
 * may have handed it the key meanwhile) and writes its tombstone (L3): nothing of it is placed
 * or registered after that.
 *
 * @example
 * if (waiter.queues && busyLast !== undefined) return await queuedGrant(core, target, call, queue);
 */
export async function queuedGrant(
  core: LockCore,
  target: KeySet,
  call: ResolvedCall,
  queue: QueueCall,
): Promise<Grant> {
  const { nodes, options } = core;
  const { keys, place, waitUntil, alive, short, looked } = queue;
  const { budget, lease } = call;
  const key = target.name;
  const token = newToken();
  const began = performance.now();
  const size = () => {
    alive();
    return queue.size();
  };
  const plan = {
    ...{ key, keys, place, token, waitUntil, size, short, seen: alive },
    ...{ began: queue.began, looked },
  };
  const wait = new QueuedWait(core, call, plan, lockSide(core, budget, plan));
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
      const attempt = looked + looks - 1;
      core.emit({ type: "acquire", key, attempt, result: "granted", durationMs, outcomes });
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
