import type { LockCore } from "../core";
import { unheardFailure } from "../failure";
import { look } from "../look";
import type { ResolvedCall } from "../options";
import { Pacing } from "./pacing";
import type { LineSpot, LocalLine, NextRound } from "./queue";
import { waitTurn } from "./turn";
import type { Waiter, WaitPlan } from "./waiter";

/**
 * The {@link Waiter} every acquire uses: the local line for every waiting caller, then either the
 * nodes' queues or polling, each a unit of its own checked against docs/SAFETY.md §6 on its own:
 *
 * - the local line ({@link waitTurn}, `queue.ts`; docs/SAFETY.md §6 "The local line", "Backstop"):
 *   callers of one `Locks` instance line up per key by place; only the first asks the nodes,
 *   nobody asks while one of them holds the key, and a release hands the key to the first in line
 *   in the same requests (`handover.ts`, docs/SAFETY.md §3 "handover") unless a queue on the
 *   nodes has an earlier waiter of another instance;
 * - the queue (`queued.ts`; docs/SAFETY.md §6 "The queue"): a caller for one key whose nodes all
 *   stream waits in every node's queue and counts the hand-offs;
 * - pacing ({@link Pacing}; docs/SAFETY.md §6 "Progress"): backoff and probes for the others (a
 *   lock on several keys, nodes that cannot stream).
 *
 * @example
 * const waiter: Waiter = combinedWaiter(core, call, plan);
 */
export function combinedWaiter(core: LockCore, call: ResolvedCall, plan: WaitPlan): Waiter {
  const { key, keys, began, waitUntil } = plan;
  const { signal, budget } = call;
  // Longest a live first waiter goes without a sign of life: a retry sleep plus a look (probe,
  // round, fence raise, cleanup: a request timeout each).
  const patience = core.options.retryDelayMax + 4 * core.timeoutFor(call.lease);
  // The call's place: epoch ms of its start, the same order on every node and in the line.
  const place = Math.floor(Date.now() - (performance.now() - began));
  const waits = call.wait > 0;
  const pacing = new Pacing(core);
  let line: LocalLine | undefined;
  let spot: LineSpot | undefined;
  /** This caller's line and its spot in it, joined at its place on first use. */
  const join = (): [LocalLine, LineSpot] => {
    line ??= core.lines.of(core.lineKey(keys));
    spot ??= line.join(patience, place);
    return [line, spot];
  };
  /** The round a hand-over runs for this caller, sized when the release runs. */
  const next = (): NextRound | undefined => {
    const terms = plan.size();
    return terms instanceof Error ? undefined : { ...terms, place };
  };
  return {
    place,
    queues: waits && keys.length === 1 && core.nodes.every((node) => node.streams),
    look: (spec) => look(core, { ...spec, place: waits ? place : undefined }, pacing.probeAt),
    // Wait in the local line when someone of this instance holds or waits for the key (or this
    // caller already stands in it), standing ready to take the key over from a releasing grant.
    async turn(failure) {
      if (waits && (spot !== undefined || core.lines.peek(core.lineKey(keys))?.idle === false)) {
        const [line, spot] = join();
        if (!line.isTurn(spot)) {
          const waited = await waitTurn(line, spot, { until: waitUntil, signal, next });
          if (typeof waited === "boolean") {
            if (signal?.aborted) throw signal.reason;
            if (!waited) throw failure() ?? unheardFailure(core, key, line);
          }
          pacing.turn();
          if (waited !== true) return waited;
        }
      }
      return undefined;
    },
    stand() {
      const [line, spot] = join();
      line.seen(spot);
      return (outcomes) => {
        line.seen(spot);
        if (outcomes !== undefined) line.last = { outcomes, why: undefined };
      };
    },
    // Plan the sleep, stand in the line from the first refused look on, then sleep.
    async pause(refused) {
      const delay = pacing.plan(refused, waitUntil, budget);
      const [line, spot] = join();
      line.seen(spot);
      line.last = refused.last;
      await pacing.pause(line, spot, { delay, signal });
      if (signal?.aborted) throw signal.reason;
    },
    stop() {
      if (spot !== undefined) line?.leave(spot);
    },
  };
}
