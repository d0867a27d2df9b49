import type { Round } from "../../quorum";
import { sleep } from "../timing";
import type { LineSpot, LocalLine, NextRound, Offer } from "./queue";

/**
 * Waiting strategy 1, the local line: a caller's wait for its turn in it. Keeps docs/SAFETY.md
 * §3 "handover" (a round a release runs for the first waiter is an acquire round, judged like any
 * other) and §6 "The local line keeps the room's order".
 *
 * @module
 */

/** A round a releasing grant of this instance runs for us (see `handoverRound`). */
export interface HandedRound {
  readonly round: Promise<Round<number>>;
  readonly next: NextRound;
}

/**
 * Waiting strategy 1, the local line (docs/SAFETY.md §3 "handover"): wait in `line` until
 * `spot`'s turn (first, nothing held here) or `wait.until`. While first behind a grant held
 * here, stand ready to take over from it: its release then runs our next round, sized by
 * `wait.next()` at that moment; wake at that grant's validity end at the latest. Behind other
 * waiters, wake every `patience` to drop a first waiter whose caller is gone, and join again at
 * the end if this one was dropped itself (it was only slow). Resolves with the handed-over
 * round, or whether the turn came (`false`: the time ran out or `wait.signal` aborted).
 *
 * Nothing here decides who holds the lock: a handed-over round is an acquire round like any
 * other, and the caller checks it the same way.
 *
 * @example
 * const waited = await waitTurn(line, spot, { until: lineUntil, signal, next });
 * if (typeof waited !== "boolean") round = await waited.round;
 */
export async function waitTurn(
  line: LocalLine,
  spot: LineSpot,
  wait: {
    /** Stop waiting then (`performance.now()` clock). */
    readonly until: number;
    readonly signal: AbortSignal | undefined;
    /** Sizes the round a releasing grant would run for us. */
    readonly next: () => NextRound | undefined;
  },
): Promise<HandedRound | boolean> {
  const { until, signal, next } = wait;
  let sized: NextRound | undefined;
  let taken: Promise<Round<number>> | undefined;
  const offer: Offer = {
    next: () => {
      sized = next();
      return sized;
    },
    accept: (round) => {
      taken = round;
    },
  };
  try {
    for (let now = performance.now(); taken === undefined; now = performance.now()) {
      line.rejoin(spot);
      line.seen(spot);
      line.prune(spot, now);
      if (line.isTurn(spot, now)) break;
      if (until <= now || signal?.aborted) break;
      let wakeAt: number;
      if (line.isFirst(spot)) {
        line.offer(spot, offer);
        wakeAt = Math.min(until, line.heldUntil(now));
      } else {
        wakeAt = Math.min(until, now + spot.patience);
      }
      await sleep(wakeAt - now, signal, line.changed(spot));
    }
  } finally {
    line.withdraw(spot);
  }
  if (taken !== undefined && sized !== undefined) return { round: taken, next: sized };
  return line.isTurn(spot);
}
