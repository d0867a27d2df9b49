/**
 * The semaphore's defects (docs/design/semaphore.md §5 "Mutants"; docs/SAFETY.md §4c), each
 * brought back in what the simulation runs: in the nodes' Lua (`SEMAPHORE_MUTANTS`, merged into
 * `MUTANTS`), or in the library's source in the client realms (`SEMAPHORE_CLIENT_MUTANTS`: a quoted passage
 * of a source file replaced when the realms' bundle is built, `runtime/bundle.ts`). Each is
 * caught by a named regression (`semaphore-regressions.ts`) or said below why none can.
 *
 * @module
 */

import { DISCARD_SLOTS, RELEASE_SLOTS, SEM_ACQUIRE } from "../../src/scripts/semaphore";
import { mutate, type ScriptOverrides } from "./mutate";
import type { SourcePatch } from "./runtime/bundle";

/** The semaphore scripts' mutants. */
export const SEMAPHORE_MUTANTS = {
  /**
   * S1 (docs/SAFETY.md §4c): SEM_ACQUIRE places without the "find" scan, so a re-sent look (its
   * first reply lost after it ran) places the call's token on a second slot of the node.
   * Regression `s-resent-look`.
   */
  "s-place-second-slot": new Map([
    mutate(
      SEM_ACQUIRE,
      'if redis.call("GET", lockKey(i)) == token then\n    lengthen(',
      "if false then\n    lengthen(",
    ),
  ]),
  /**
   * L3 for permits (docs/SAFETY.md §4c "The release"): RELEASE_SLOTS writes no tombstone, so a
   * look of the granted call that reaches a node after the release places the token there, held
   * by nobody (with P = 1 no trim follows to write one). Regression `s-late-look-after-release`.
   */
  "s-release-without-tombstone": new Map([
    mutate(
      RELEASE_SLOTS,
      'if void then\n  redis.call("SET", void, "1", "PX", keepMs)',
      'if false then\n  redis.call("SET", void, "1", "PX", keepMs)',
    ),
  ]),
  /**
   * The trim (docs/SAFETY.md §4c "The trim"): DISCARD_SLOTS also deletes the call's token from
   * the slot it was not given — the slot the permit holds, when it is a trim (P − 1 triples, the
   * missing index the kept one). The client sends the trim only to nodes that did not name the
   * permit's slot, so no such node is counted for it: E2 for the slot stands whatever the trim
   * does there, and no schedule can tell this mutant apart (regression `s-trim-late-node` runs
   * it and finds nothing; see that regression).
   */
  "s-trim-deletes-kept-slot": new Map([
    mutate(
      DISCARD_SLOTS,
      'if void then\n  redis.call("SET", void, "1", "PX", keepMs)\nend\nreturn found',
      // New locals take names the shipped scripts already have (their renaming knows them).
      `local all = {}
for i = 1, n do
  all[slotOf[i]] = true
end
local part = string.match(lockKey(1), "^(.*):permit:%d+$")
for k = 0, n do
  local key = part .. ":permit:" .. k
  if not all[k] and redis.call("GET", key) == token then
    redis.call("DEL", key)
    found = 1
  end
end
if void then
  redis.call("SET", void, "1", "PX", keepMs)
end
return found`,
    ),
  ]),
} satisfies Record<string, ScriptOverrides>;

/** The semaphore client's mutants: changes to the library's source, in every client realm. */
export const SEMAPHORE_CLIENT_MUTANTS = {
  /**
   * redis-semaphore's rule (docs/design/semaphore.md §1 "What cannot work"): a look is granted
   * when a majority of nodes placed the token on any slot, each node counted whatever slot it
   * named. Regression `s-partition-pigeonhole`: three holders of two permits.
   */
  "s-count-across-slots": [
    {
      file: "src/semaphore/rounds.ts",
      from: "const count = (counts.get(reply.slot) ?? 0) + 1;\n    if (count >= quorum) return reply.slot;\n    counts.set(reply.slot, count);",
      to: "const count = (counts.get(0) ?? 0) + 1;\n    if (count >= quorum) return reply.slot;\n    counts.set(0, count);",
    },
  ],
  /**
   * The trim's other half (docs/SAFETY.md §4c "The trim": it "never touches j"): the client trims
   * every slot, the permit's own included, on every node, those counted for it too, so the permit
   * is gone from the nodes while its holder counts it valid. Regression `s-trim-late-node`: the
   * later callers take both slots while the first holds one (over-capacity).
   */
  "s-trim-everywhere": [
    {
      file: "src/semaphore/grant.ts",
      from: "const slots = plan.order.filter((s) => s !== slot);",
      to: "const slots = [...plan.order];",
    },
    {
      file: "src/semaphore/grant.ts",
      from: "if (!(await needed(index))) return;",
      to: "await needed(index);",
    },
  ],
  /**
   * docs/SAFETY.md §4c "Order", undone (commit 577f3c0, "a tryAcquire of a permit comes after
   * every waiter"): a call that does not wait looks with its call's place, so one from an
   * instance whose clock is behind comes before waiters that called earlier, and a look of it
   * that finds a slot free takes it instead of handing it to them. Regression
   * `s-try-before-waiter`: "permit-order".
   */
  "s-try-keeps-place": [
    {
      file: "src/semaphore/acquire.ts",
      from: "const at = call.wait > 0 ? place : undefined;",
      to: "const at = place;",
    },
  ],
  /**
   * docs/SAFETY.md §6 "Progress" for permits (§4c "Waiting": a look is SEM_ACQUIRE with the
   * registration): a waiting call's looks only register, placing on no free slot, so it is
   * served by hand-offs alone, and a slot freed by its holder's expiry (a crashed holder: no
   * script hands it on) stays free while it waits. Regression `s-expired-slot-waiter`:
   * "permit-liveness".
   */
  "s-look-never-places": [
    {
      file: "src/semaphore/side.ts",
      from: "eligible: aim === undefined ? plan.order.length : 1,",
      to: "eligible: aim === undefined ? 0 : 1,",
    },
  ],
} satisfies Record<string, readonly SourcePatch[]>;
