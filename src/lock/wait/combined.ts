import type { LockError } from "../../errors";
import type { Round } from "../../quorum";
import type { RoomRegistration } from "../../scripts";
import type { LockCore } from "../core";
import { unheardFailure } from "../failure";
import type { Verdict } from "../look";
import type { ResolvedCall } from "../options";
import type { RoundSpec } from "../spec";
import { Pacing } from "./pacing";
import type { LineSpot, LocalLine, NextRound } from "./queue";
import { RoomSeat } from "./room";
import { type HandedRound, waitTurn } from "./turn";
import type { Refused, Waiter, WaitPlan } from "./waiter";

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
 * const waiter: Waiter = new CombinedWaiter(core, call, plan);
 */
export class CombinedWaiter implements Waiter {
  readonly #seat: RoomSeat;
  readonly #pacing: Pacing;
  /**
   * Longest a live first waiter goes without a sign of life: a retry sleep plus a look (probe,
   * round, fence raise, cleanup: a request timeout each).
   */
  readonly #patience: number;
  #line: LocalLine | undefined;
  #spot: LineSpot | undefined;

  constructor(
    private readonly core: LockCore,
    private readonly call: ResolvedCall,
    private readonly plan: WaitPlan,
  ) {
    const { began, lineUntil, keys } = plan;
    this.#patience = core.options.retryDelayMax + 4 * core.timeoutFor(call.lease);
    this.#seat = new RoomSeat(core, call, keys, { began, until: lineUntil });
    this.#pacing = new Pacing(core, keys);
  }

  get registration(): RoomRegistration | undefined {
    return this.#seat.registration;
  }

  get probeAt(): number | undefined {
    return this.#pacing.probeAt;
  }

  /**
   * Wait in the local line when someone of this instance holds or waits for the key (or this
   * caller already stands in it), standing ready to take the key over from a releasing grant.
   */
  async turn(): Promise<HandedRound | boolean> {
    const { core, call, plan } = this;
    const { signal } = call;
    if (
      call.wait > 0 &&
      (this.#spot !== undefined || core.lines.peek(core.lineKey(plan.keys))?.idle === false)
    ) {
      const [line, spot] = this.#join();
      if (!line.isTurn(spot)) {
        const next = () => this.#next();
        const waited = await waitTurn(line, spot, { until: plan.lineUntil, signal, next });
        if (typeof waited === "boolean") {
          if (signal?.aborted) throw signal.reason;
          if (!waited) return false;
        }
        this.#pacing.turn();
        return waited;
      }
    }
    return true;
  }

  granted(round: Round<number>, spec: RoundSpec): void {
    this.#pacing.granted();
    this.#seat.granted(round, spec);
  }

  refused(round: Round<number>, verdict: Pick<Verdict, "busy" | "outcomes">): void {
    if (verdict.busy) this.#seat.refused(round, verdict.outcomes);
  }

  /** Plan the sleep, stand in the line from the first refused look on, then sleep. */
  async pause(refused: Refused): Promise<void> {
    const { call, plan } = this;
    const { signal } = call;
    const delay = this.#pacing.plan(refused, plan.waitUntil, call.budget, plan.spare);
    // From the first failed look on, wait in line with the other callers of this instance.
    const [line, spot] = this.#join();
    line.seen(spot);
    line.last = refused.last;
    await this.#pacing.pause(line, spot, { delay, signal, member: this.#seat.entry?.member });
    if (signal?.aborted) throw signal.reason;
  }

  unheard(): LockError {
    return unheardFailure(this.core, this.plan.key, this.#join()[0]);
  }

  stop(): void {
    if (this.#spot !== undefined) this.#line?.leave(this.#spot);
    this.#pacing.close();
    this.#seat.stopped(this.plan.keys);
  }

  /** This caller's line and its spot in it, joined at its room place on first use. */
  #join(): [LocalLine, LineSpot] {
    this.#line ??= this.core.lines.of(this.core.lineKey(this.plan.keys));
    this.#spot ??= this.#line.join(this.#patience, this.#seat.entry?.place);
    return [this.#line, this.#spot];
  }

  /** The round a hand-over runs for this caller, sized when the release runs. */
  #next(): NextRound | undefined {
    const terms = this.plan.size();
    if (terms instanceof Error) return undefined;
    const seat = this.#seat;
    return { ...terms, waiter: seat.registration, entry: seat.entry };
  }
}
