import type { Budget } from "../budget/budget";
import type { ResolvedCall } from "../options";
import type { Round } from "../quorum/fanout";
import type { Keys, LockCore } from "./core";
import { type WaiterEntry, waiterArgs, waiterEntry } from "./wake";

/**
 * A waiting caller's seat in its key's wait room on the nodes (docs/SAFETY.md §6): every look of a
 * caller with `wait > 0` carries its entry, so a node that refuses the look registers it there (in
 * order of the call's start), and releases of every instance serve the room in that order. With
 * `wake` the entry names this instance's wake-up channel; otherwise it names how long a release
 * should keep the key for it (`p<ms>`: its longest sleep plus a look).
 *
 * The seat only orders waiters: a reservation it earns is taken by an ordinary acquire round.
 *
 * @example
 * const seat = new RoomSeat(core, call, began, lineUntil);
 * core.acquireRound(keys, token, ttl, timeoutMs, budget, undefined, seat.args);
 */
export class RoomSeat {
  readonly entry: WaiterEntry | undefined;
  /** ACQUIRE's registration arguments (ARGV[4..6]); empty for a caller that does not wait. */
  readonly args: readonly string[];
  /** A look registered this caller in a room, and it has not been granted since. */
  #registered = false;

  constructor(
    private readonly core: LockCore,
    private readonly call: ResolvedCall,
    began: number,
    lineUntil: number,
  ) {
    const { options } = core;
    const pollMs = options.retryDelayMax + core.timeoutFor(call.lease);
    const listener = options.wake ? core.wake.id : `p${pollMs}`;
    this.entry = call.wait > 0 ? waiterEntry(lineUntil - began, listener) : undefined;
    // The room outlives this caller's wait: while listening it may refresh one node only.
    const roomTtl = Math.max(call.lease, 2 * options.retryDelayMax, Math.ceil(lineUntil - began));
    this.args = this.entry === undefined ? [] : waiterArgs(this.entry, roomTtl);
  }

  /** A look found the key busy: the nodes that refused it registered this caller. */
  refused(): void {
    if (this.entry !== undefined) this.#registered = true;
  }

  /**
   * Granted: leave the rooms of the nodes that refused `round` (also those answering after the
   * majority), or a later release would keep the key for a caller long gone.
   */
  granted(keys: Keys, round: Round<number>, timeoutMs: number, budget: Budget | undefined): void {
    this.#registered = false;
    const member = this.entry?.member;
    if (member === undefined) return;
    const { core } = this;
    void round.settled.then((all) => {
      const refused = all.filter((o) => o.status === "held" || o.status === "done");
      const where = refused.map((o) => core.nodes[o.index]).filter((x) => x !== undefined);
      core.leave(where, keys, member, timeoutMs, budget);
    });
  }

  /**
   * Stopped waiting without a grant (aborted, failed, out of time or budget): leave every room, so
   * no release keeps the key for this caller and no room outlives the last wait for its key (the
   * scripts would skip the entry after its deadline, but the room key would stay until its TTL).
   */
  stopped(keys: Keys): void {
    const { core, entry, call } = this;
    if (!this.#registered || entry === undefined) return;
    core.leave(core.nodes, keys, entry.member, core.timeoutFor(call.lease), call.budget);
  }
}
