import type { Budget } from "../budget";
import { fanOut, type Round } from "../quorum";
import { evalScript, RECORD, scriptKeys } from "../scripts";
import type { LockCore } from "./core";
import type { Keys } from "./spec";

/**
 * Record round (the Idempotency-Key layer): decided as soon as one node answers with a done
 * marker (`done`, value = the record kept in it, `""` for none), else once every node answered or
 * failed: a record written on a minority only is still found. Others report `held` (pttl) or
 * `absent`. A function of its own rather than a `LockCore` method, so that only the modules that
 * read records bundle RECORD: `import { createLocks }` does not.
 *
 * @example
 * const round = await recordRound(core, core.keys("order:42"), 500, undefined);
 * for (const record of round.values.values()) console.log(record); // the kept record, if any
 */
export function recordRound(
  core: LockCore,
  keys: Keys,
  timeoutMs: number,
  budget: Budget | undefined,
): Promise<Round<string>> {
  const flat = scriptKeys(keys);
  return core.timed(timeoutMs, (signal) =>
    fanOut(
      core.nodes,
      async (node) => {
        const options = { timeoutMs, budget, signal };
        const reply = await evalScript(node, RECORD, flat, RECORD.args({}), options);
        if (reply.kind === "absent") return { status: "absent" };
        if (reply.kind === "held") return { status: "held", pttl: reply.pttl };
        return { status: "done", pttl: reply.pttl, value: reply.record };
      },
      { quorum: 1, isFor: (status) => status === "done" },
    ),
  );
}
