import type { NodeOutcome } from "../errors";
import type { NodeAnswer, Round } from "../quorum";
import { isValidGrant, validity } from "../quorum";
import type { LockCore } from "./core";
import { isDone } from "./failure";
import type { AcquireSpec, RoundSpec } from "./spec";

/**
 * One look at the lock with `spec.token`. Without `probeAt`, the acquire round on every node. With
 * it, the acquire script on that node first (one request): only if it granted there are the
 * other nodes asked, and the round then counts from the probe's start (the probed node's TTL runs
 * from there). A probe that did not grant comes back as a round of that one node.
 *
 * @example
 * const round = await look(core, { ...spec, waiter: seat.registration }, pacing.probeAt);
 */
export async function look(
  core: LockCore,
  spec: AcquireSpec,
  probeAt: number | undefined,
): Promise<Round<number>> {
  if (probeAt === undefined) {
    return core.acquireRound(spec);
  }
  const probe = await core.probeRound(probeAt, spec);
  if (probe.outcomes[0]?.status !== "ok") return probe;
  const fence = probe.values.get(probeAt) ?? 0;
  const answer: NodeAnswer<number> = { status: "ok", value: fence, fence };
  const known = new Map([[probeAt, answer]]);
  const round = await core.acquireRound(spec, known);
  return { ...round, startedAt: probe.startedAt };
}

/** What a look came to (see {@link judge}). */
export interface Verdict {
  /** A grant: majority, no done marker, fence raised, validity at least `minValidity`. */
  readonly granted: boolean;
  /** Granted on a majority (and the fence raised) but left with too little validity. */
  readonly invalid: boolean;
  /** The round's outcomes, or the fence raise's when that failed. */
  readonly outcomes: readonly NodeOutcome[];
  readonly why: string | undefined;
  readonly fence: number | undefined;
  readonly durationMs: number;
  /** A probe (one node) rather than a round. */
  readonly probed: boolean;
  /** Some node holds the key for another caller, or a done marker. */
  readonly busy: boolean;
}

/**
 * Judge a look, the round `round` ran with `spec` (docs/SAFETY.md §3, "acquire round, probe"): a
 * done marker on any node that answered means the job of this key finished, so never grant it
 * (its marker may be on a minority only); with fencing on N > 1, raise the fence on every node
 * and require a majority of raises that count (§5, F2); then the validity left after the round,
 * counted from its start (§3, E2).
 *
 * @example
 * const verdict = await judge(core, round, spec);
 */
export async function judge(
  core: LockCore,
  round: Round<number>,
  spec: RoundSpec,
): Promise<Verdict> {
  const { nodes, options } = core;
  const { ttl } = spec;
  let outcomes = round.outcomes;
  let why: string | undefined;
  let ok = round.ok && !outcomes.some(isDone);
  let fence: number | undefined;
  if (ok && options.fencing) {
    fence = Math.max(0, ...round.values.values());
    if (nodes.length > 1) {
      // Raise every node, not only the granting ones: raising is a max (always safe), it covers a
      // granting node still in flight, and any later majority meets a majority of raised nodes.
      const raise = await core.raiseRound(nodes, spec, fence);
      if (!raise.ok) {
        ok = false;
        outcomes = raise.outcomes;
        why = "the fence could not be raised on a majority";
      }
    }
  }
  const durationMs = performance.now() - round.startedAt;
  let granted = false;
  if (ok) {
    const valid = validity(ttl, durationMs, options.driftFactor);
    granted = isValidGrant(valid, options.minValidity);
    if (!granted) {
      why = `validity ${Math.round(valid)} ms below minValidity after a ${Math.round(durationMs)} ms round`;
    }
  }
  const busy = outcomes.some((o) => o.status === "held" || o.status === "done");
  const probed = round.outcomes.length < nodes.length;
  return { granted, invalid: ok && !granted, outcomes, why, fence, durationMs, probed, busy };
}
