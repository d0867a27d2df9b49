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

/**
 * The {@link Holds} of an acquire round, as decided; in-flight nodes follow their request. Nodes
 * the round did not ask (a probe) have no entry: whoever reads it treats them as `true`.
 *
 * @example
 * const holds = holdsOf(round); // e.g. [true, true, Promise<boolean>] for a round decided at 2 of 3
 */
export function holdsOf(round: Round<unknown>): Holds {
  const holds: (boolean | Promise<boolean>)[] = [];
  round.outcomes.forEach((outcome, position) => {
    const { index, status } = outcome;
    if (status !== "pending") {
      holds[index] = mayHaveGranted(status);
      return;
    }
    holds[index] = (round.each[position] as Promise<NodeOutcome>).then((o) => {
      // Settled: later readers get the answer itself and send without waiting a tick.
      const may = mayHaveGranted(o.status);
      holds[index] = may;
      return may;
    });
  });
  return holds;
}

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
