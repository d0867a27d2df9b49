import type { Budget } from "../budget";
import type { NodeStatus } from "../errors";
import { fanOut, type Round } from "../quorum";
import { COMPLETE, type CompleteReply, evalScript, scriptKeys } from "../scripts";
import type { LockCore } from "./core";
import type { GrantSpec } from "./spec";
import { random, sleep } from "./timing";

/** For complete: the done marker is on that node (written now, or already there). */
const recorded = (status: NodeStatus): boolean => status === "ok" || status === "done";

/**
 * What a completing handle hands over once its interval ended (no timer, no extension in flight,
 * its own release round over): the rounds are sent from here.
 */
export interface Ending {
  readonly core: LockCore;
  readonly spec: GrantSpec;
  /** The lock's validity end (monotonic ms); it no longer moves. */
  readonly validUntil: number;
  /** Keep a round's every answer for `release({ settled: true })`. */
  settle(round: Round<unknown>): void;
}

/**
 * Complete round (`once()`): turn our grant into a done marker kept `retention` ms (with
 * `record` kept in it, for the idempotency layer). `ok` written (the key held our token or was
 * absent), `done` already recorded, `held` someone else holds the key (left alone). Decided once a
 * majority wrote or found the marker. Sent to every node at once, even where our acquire is still
 * in flight: COMPLETE writes the marker on an absent key too, and an acquire landing after it
 * finds the marker and sets nothing, so the order does not matter (unlike a release, which an
 * acquire landing later would undo). A function of its own rather than a `LockCore` method, so
 * that only the modules that write done markers bundle COMPLETE: `import { createLocks }` does not.
 *
 * @example
 * const round = await completeRound(core, { keys, token, timeoutMs: 500, budget: undefined }, 60_000);
 */
export function completeRound(
  core: LockCore,
  spec: GrantSpec,
  retention: number,
  record?: string,
): Promise<Round<CompleteReply>> {
  const { keys, token, timeoutMs, budget } = spec;
  const flat = scriptKeys(keys);
  const args = COMPLETE.args({ token, retentionMs: retention, record });
  return core.timed(timeoutMs, (signal) =>
    fanOut(
      core.nodes,
      async (node) => {
        const options = { timeoutMs, budget, signal };
        const reply = await evalScript(node, COMPLETE, flat, args, options);
        const status = reply === 1 ? "ok" : reply === 2 ? "done" : "held";
        return { status, value: reply };
      },
      { quorum: core.quorum, isFor: recorded },
    ),
  );
}

/** Whether the budget (if any) leaves time and node requests for one more round. */
function canResend(budget: Budget | undefined, timeoutMs: number, nodes: number): boolean {
  if (budget === undefined) return true;
  return budget.remaining() > timeoutMs && budget.remainingSubrequests() >= nodes;
}

/**
 * The completion's rounds (docs/SAFETY.md §3, "complete"): one COMPLETE round, and with `persist`
 * (the idempotency layer, docs/SAFETY.md §6b I1) re-sent until a majority holds the marker, while
 * our token still holds the key on a majority (before the validity end), so that the claim is
 * never given up before the record is on a majority. A re-send finding the marker leaves the
 * first record (COMPLETE), so only the nodes that missed it change. Returns the last round.
 *
 * @example
 * const round = await completeRounds(ending, 86_400_000, record, true);
 */
export async function completeRounds(
  ending: Ending,
  retention: number,
  record: string | undefined,
  persist: boolean,
): Promise<Round<CompleteReply>> {
  const { core, spec, validUntil } = ending;
  const { timeoutMs } = spec;
  let round = await completeRound(core, spec, retention, record);
  ending.settle(round);
  for (let pause = core.options.retryDelay; persist && !round.ok; ) {
    // Another holder on more than N − Q nodes: no re-send can reach a majority.
    const taken = round.outcomes.filter((o) => o.status === "held").length;
    if (taken > core.nodes.length - core.quorum) break;
    const left = validUntil - performance.now() - timeoutMs;
    if (left <= 0 || !canResend(spec.budget, timeoutMs, core.nodes.length)) break;
    await sleep(Math.min(left, pause * (0.5 + random() / 2)));
    if (validUntil - performance.now() - timeoutMs <= 0) break;
    pause = Math.min(2 * pause, core.options.retryDelayMax);
    round = await completeRound(core, spec, retention, record);
    ending.settle(round);
  }
  return round;
}
