import type { NodeOutcome } from "../../errors";
import type { Round } from "../../quorum";
import type { RoomRegistration } from "../../scripts";
import type { Keys, LockCore } from "../core";
import type { ResolvedCall } from "../options";
import type { RoundSpec } from "../spec";
import { registration, type WaiterEntry, waiterEntry } from "./wake";

/**
 * Waiting strategy 2, the wait room on the nodes: a waiting caller's seat in its key's room.
 * Keeps docs/SAFETY.md §6 "Order across instances" and §6 "Leaving the rooms"; a caller for
 * several keys takes no seat (docs/SAFETY.md §4b "Liveness, not fairness"). A seat only orders
 * waiters: a reservation it earns is taken by an ordinary acquire round.
 *
 * @module
 */

/** The node may have registered the waiter: held by another, or no answer (it may have run). */
const mayRegister = (o: NodeOutcome): boolean =>
  o.status === "held" || o.status === "timeout" || o.status === "error";

/**
 * A waiting caller's seat in its key's wait room on the nodes (docs/SAFETY.md §6): every look of a
 * caller with `wait > 0` carries its entry, so a node that refuses the look registers it there (in
 * order of the call's start), and releases of every instance serve the room in that order. With
 * `wake` the entry names this instance's wake-up channel; otherwise it names how long a release
 * should keep the key for it (`p<ms>`: its longest sleep plus a look).
 *
 * A caller for several keys takes no seat in the rooms (docs/SAFETY.md §4b): a release of one of
 * its keys would keep that key for it while another of its keys is still held, idle for the
 * whole reservation, again at every release — a convoy that can cut other callers of the key to
 * a fiftieth of their throughput. It still has a place: its instance's line orders by it,
 * and a release or hand-over to it serves the rooms' earlier waiters first (`served`).
 *
 * The seat only orders waiters: a reservation it earns is taken by an ordinary acquire round.
 *
 * @example
 * const seat = new RoomSeat(core, call, keys, { began, until: lineUntil });
 * core.acquireRound({ ...spec, waiter: seat.registration });
 */
export class RoomSeat {
  /**
   * This caller's entry and place: a hand-over to it passes them (HANDOVER serves a room's earlier
   * waiters first); `undefined` for a caller that does not wait.
   */
  readonly entry: WaiterEntry | undefined;
  /**
   * ACQUIRE's registration of the entry; `undefined` for a caller that does not wait or waits for
   * several keys.
   */
  readonly registration: RoomRegistration | undefined;
  /** Looks register this caller in the rooms: it waits, for one key. */
  readonly #queues: boolean;
  /** A look registered this caller in a room, and it has not been granted since. */
  #registered = false;
  /** Bumped by a grant: a late answer to an earlier look must not mark the seat registered. */
  #generation = 0;
  /** Looks whose pending nodes are still to be judged (see {@link refused}). */
  readonly #judging: Promise<void>[] = [];

  /**
   * A seat for `call` on `keys`, whose wait began at `wait.began` and may go on in the local line
   * until `wait.until` (both on the `performance.now()` clock).
   */
  constructor(
    private readonly core: LockCore,
    private readonly call: ResolvedCall,
    keys: Keys,
    wait: { readonly began: number; readonly until: number },
  ) {
    const { began, until: lineUntil } = wait;
    const { options } = core;
    const pollMs = options.retryDelayMax + core.timeoutFor(call.lease);
    const listener = core.listens(keys) ? core.channels.id : `p${pollMs}`;
    const entry = call.wait > 0 ? waiterEntry(lineUntil - began, listener) : undefined;
    this.entry = entry;
    this.#queues = entry !== undefined && keys.length === 1;
    // The room outlives this caller's wait: while listening it may refresh one node only.
    const roomTtl = Math.max(call.lease, 2 * options.retryDelayMax, Math.ceil(lineUntil - began));
    this.registration =
      entry !== undefined && this.#queues ? registration(entry, roomTtl) : undefined;
  }

  /**
   * A look found the key busy: the nodes that refused it because another caller holds it
   * registered this caller, and one that failed may have. A done marker registers nobody (ACQUIRE
   * returns before), and a node still pending is judged once it answers: a look refused by done
   * markers alone leaves nothing to leave.
   */
  refused(round: Round<number>, outcomes: readonly NodeOutcome[]): void {
    if (!this.#queues) return;
    if (outcomes.some(mayRegister)) {
      this.#registered = true;
    } else if (outcomes.some((o) => o.status === "pending")) {
      const generation = this.#generation;
      this.#judging.push(
        round.settled.then((all) => {
          if (generation === this.#generation && all.some(mayRegister)) this.#registered = true;
        }),
      );
    }
  }

  /**
   * Granted: leave the rooms of the nodes that refused `round` (run with `spec`; also those
   * answering after the majority), or a later release would keep the key for a caller long gone.
   */
  granted(round: Round<number>, spec: RoundSpec): void {
    this.#registered = false;
    this.#generation += 1;
    const member = this.entry?.member;
    if (member === undefined || !this.#queues) return;
    const { core } = this;
    void round.settled.then((all) => {
      const refused = all.filter((o) => o.status === "held" || o.status === "done");
      const where = refused.map((o) => core.nodes[o.index]).filter((x) => x !== undefined);
      core.leave(where, member, spec);
    });
  }

  /**
   * Stopped waiting without a grant (aborted, failed, out of time or budget): leave every room, so
   * no release keeps the key for this caller and no room outlives the last wait for its key (the
   * scripts would skip the entry after its deadline, but the room key would stay until its TTL).
   */
  stopped(keys: Keys): void {
    const { core, entry, call } = this;
    if (entry === undefined || !this.#queues) return;
    const leave = () => {
      if (!this.#registered) return;
      const timeoutMs = core.timeoutFor(call.lease);
      core.leave(core.nodes, entry.member, { keys, timeoutMs, budget: call.budget });
    };
    if (this.#judging.length === 0) leave();
    else void Promise.all(this.#judging).then(leave);
  }
}
