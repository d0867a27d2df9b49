import type { LockCore } from "../core";
import { unheardFailure } from "../failure";
import { look } from "../look";
import type { ResolvedCall } from "../options";
import { Pacing } from "./pacing";
import type { LineSpot, LocalLine, NextRound } from "./queue";
import { RoomSeat } from "./room";
import { waitTurn } from "./turn";
import type { Waiter, WaitPlan } from "./waiter";

/**
 * The {@link Waiter} every acquire uses: three strategies combined, each a unit of its own and
 * each checked against docs/SAFETY.md §6 "Liveness and fairness" on its own:
 *
 * - the local line ({@link waitTurn}, `queue.ts`; docs/SAFETY.md §6 "The local line keeps the
 *   room's order", "Backstop"): callers of one `Locks` instance line up per key; only the first
 *   asks the nodes, nobody asks while one of them holds the key, and a release hands the key to
 *   the first in line in the same requests (`handover.ts`, docs/SAFETY.md §3 "handover");
 * - the wait room ({@link RoomSeat}; docs/SAFETY.md §6 "Order across instances", "Leaving the
 *   rooms"): every look of a caller waiting for one key registers it on the nodes that refuse
 *   it, so releases of all instances serve waiters in the order of their calls;
 * - pacing ({@link Pacing}; docs/SAFETY.md §6 "Wake-ups are hints only"): backoff and probes while
 *   polling, or wake-ups while listening.
 *
 * None of them decides who holds the lock: a look, handed over or not, is granted only by `judge`.
 *
 * @example
 * const waiter: Waiter = combinedWaiter(core, call, plan);
 */
export function combinedWaiter(core: LockCore, call: ResolvedCall, plan: WaitPlan): Waiter {
  const { key, keys, began, waitUntil, spare } = plan;
  const { signal, budget } = call;
  // Waiting in line also stops where the budget would leave no more than its reserve.
  const lineUntil =
    budget === undefined ? waitUntil : Math.min(waitUntil, budget.deadline - budget.reserve);
  // Longest a live first waiter goes without a sign of life: a retry sleep plus a look (probe,
  // round, fence raise, cleanup: a request timeout each).
  const patience = core.options.retryDelayMax + 4 * core.timeoutFor(call.lease);
  const seat = new RoomSeat(core, call, keys, { began, until: lineUntil });
  const pacing = new Pacing(core, keys);
  /** This caller's line and its spot in it, once it joined (see `join`). */
  let joined: LocalLine | undefined;
  let mine: LineSpot | undefined;
  /** This caller's line and its spot in it, joined at its room place on first use. */
  const join = (): [LocalLine, LineSpot] => {
    joined ??= core.lines.of(core.lineKey(keys));
    mine ??= joined.join(patience, seat.entry?.place);
    return [joined, mine];
  };
  /** The round a hand-over runs for this caller, sized when the release runs. */
  const next = (): NextRound | undefined => {
    const terms = plan.size();
    if (terms instanceof Error) return undefined;
    return { ...terms, waiter: seat.registration, entry: seat.entry };
  };
  return {
    look: (spec) => look(core, { ...spec, waiter: seat.registration }, pacing.probeAt),
    // Wait in the local line when someone of this instance holds or waits for the key (or this
    // caller already stands in it), standing ready to take the key over from a releasing grant.
    async turn(failure) {
      if (
        call.wait > 0 &&
        (mine !== undefined || core.lines.peek(core.lineKey(keys))?.idle === false)
      ) {
        const [line, spot] = join();
        if (!line.isTurn(spot)) {
          const waited = await waitTurn(line, spot, { until: lineUntil, signal, next });
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
    granted(round, spec) {
      pacing.granted();
      seat.granted(round, spec);
    },
    refused(round, verdict) {
      if (verdict.busy) seat.refused(round, verdict.outcomes);
    },
    // Plan the sleep, stand in the line from the first refused look on, then sleep.
    async pause(refused) {
      const delay = pacing.plan(refused, waitUntil, budget, spare);
      // From the first failed look on, wait in line with the other callers of this instance.
      const [line, spot] = join();
      line.seen(spot);
      line.last = refused.last;
      await pacing.pause(line, spot, { delay, signal, member: seat.entry?.member });
      if (signal?.aborted) throw signal.reason;
    },
    stop() {
      if (mine !== undefined) joined?.leave(mine);
      pacing.close();
      seat.stopped(keys);
    },
  };
}
