import type { NodeOutcome, NodeStatus } from "../errors";
import type { NodeAnswer, Round } from "../quorum";
import type { CasReply } from "../scripts";

/** An acquire outcome after which our token may be on that node (failures may have run). */
export const mayHaveGranted = (status: NodeStatus): boolean =>
  status === "ok" || status === "timeout" || status === "error" || status === "pending";

/**
 * Per node (by index): whether a round's token may be on it. `true` granted, or failed in a way
 * that may have run the script; `false` refused (the script wrote nothing); a promise while that
 * node's acquire request is still in flight, settling to whether it may have granted.
 *
 * Whatever ends a grant follows it: nothing is sent where the token never was, and nothing is
 * sent to a node before its acquire answered (a release landing first would find nothing, and the
 * acquire would then leave an orphaned grant there for its whole TTL).
 */
export type Holds = readonly (boolean | Promise<boolean>)[];

/** A request that failed on the client: it may still run on its node, at any later time. */
const unheard = (status: NodeStatus): boolean => status === "timeout" || status === "error";

/**
 * The {@link Holds} of an acquire round, as decided; in-flight nodes follow their request. Nodes
 * the round did not ask (a probe) have no entry: whoever reads it treats them as `true`.
 * `failed` (when given) gets the index of every node whose request failed on the client (timed
 * out, or a transport error), now or once it settles: that request may still run there later.
 *
 * @example
 * const holds = holdsOf(round); // e.g. [true, true, Promise<boolean>] for a round decided at 2 of 3
 */
export function holdsOf(round: Round<unknown>, failed?: Set<number>): Holds {
  const holds: (boolean | Promise<boolean>)[] = [];
  round.outcomes.forEach((outcome, position) => {
    const { index, status } = outcome;
    if (status !== "pending") {
      if (unheard(status)) failed?.add(index);
      holds[index] = mayHaveGranted(status);
      return;
    }
    holds[index] = (round.each[position] as Promise<NodeOutcome>).then((o) => {
      // Settled: later readers get the answer itself and send without waiting a tick.
      if (unheard(o.status)) failed?.add(index);
      const may = mayHaveGranted(o.status);
      holds[index] = may;
      return may;
    });
  });
  return holds;
}

/**
 * The nodes where a request of a grant's round may still run after the grant ended: its request
 * failed on the client, or has not answered yet. Its release writes the token's tombstone there
 * for the round's `ttl` (docs/SAFETY.md §2, L3): the late request then places nothing.
 */
export interface Unheard {
  /** The round's TTL: no request of it places the token for longer. */
  readonly ttl: number;
  /** Nodes whose request failed on the client (see {@link holdsOf}). */
  readonly failed: ReadonlySet<number>;
}

/**
 * The life of the tombstone a release of `unheard`'s grant writes on node `index` (the round's
 * TTL), or `undefined` for none: only where the round's request may still run — it failed, or
 * `holds` still waits for it (a hold settles to a boolean once its request answered).
 *
 * @example
 * const keepMs = lateFor(grant.unheard, grant.holds, node.index); // e.g. 10000, or undefined
 */
export const lateFor = (
  unheard: Unheard | undefined,
  holds: Holds | undefined,
  index: number,
): number | undefined =>
  unheard && (unheard.failed.has(index) || typeof holds?.[index] === "object")
    ? unheard.ttl
    : undefined;

/** The answer for a node our token never reached: nothing to do there (no request). */
export const NOT_THERE = { status: "absent", value: 0 } as const;

/** Extend / release reply → status: 1 done, 0 expired or absent, -1 someone else holds the key. */
export const casStatus = (reply: CasReply): NodeAnswer<CasReply>["status"] =>
  reply === 1 ? "ok" : reply === 0 ? "absent" : "held";

/**
 * Whether our token may be on a node, per its `hold`: an acquire still in flight is waited for at
 * most `ms` (on Workers a request that ended never settles its promises), and counts as `true`
 * when it has not answered by then: its request may still land.
 *
 * @example
 * if (!(await mayHold(grant.holds[node.index], timeoutMs))) return NOT_THERE;
 */
export function mayHold(
  hold: boolean | Promise<boolean> | undefined,
  ms: number,
): Promise<boolean> {
  if (hold === undefined || typeof hold === "boolean") return Promise.resolve(hold ?? true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(true), ms);
    void hold.then((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}
