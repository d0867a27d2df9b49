/**
 * The fixes in the scripts (expiries that never go down, fence raises that count only where they
 * order, the room's order, the done-marker record, single-use tickets, all-or-none locks on
 * several keys with one fence over all of them, tombstones of failed rounds, expiring one-shot
 * counters), undone one at a time in the Lua the simulated nodes run: each mutant is the current
 * script with the fix's lines replaced, so it stays in step with the real source.
 * The simulation must find a bug in its named regression schedule with each mutant
 * (`sim.test.ts`), which shows the schedules and properties would have caught the defect; the
 * two no schedule can reach (l22, q2) are checked on the script sequence in `test/sim/node`.
 *
 * @module
 */

import {
  ACQUIRE,
  COMPLETE,
  DISCARD,
  EXTEND,
  FENCE_RAISE,
  HANDOVER,
  PASS,
  RECORD,
  RELEASE,
  RESUME,
} from "../../src/scripts";
import { HELD_LOOK } from "../../src/scripts/lua";
import { SEM_ACQUIRE } from "../../src/scripts/semaphore";
import { mutate, type ScriptOverrides } from "./mutate";
import type { SourcePatch } from "./runtime/bundle";
import { SEMAPHORE_CLIENT_MUTANTS, SEMAPHORE_MUTANTS } from "./semaphore-mutants";

export type { ScriptOverrides } from "./mutate";

/** Each defect of §1 as the script change that brings it back. */
const LOCK_MUTANTS = {
  /** a: EXTEND sets the requested TTL unconditionally (a failed shorter extend shortens nodes). */
  "a-extend-shortens": new Map([
    mutate(EXTEND, "if left >= 0 and left < tonumber(ttl) then", "if true then"),
  ]),
  /** b: a fence raise counts on every node that answered, whoever holds the key there. */
  "b-raise-counts-everywhere": new Map([mutate(FENCE_RAISE, "counts = 0", "counts = 1")]),
  /**
   * c (docs/SAFETY.md §2 HANDOVER, P3): a hand-over never serves the queue's waiters placed before
   * the next local caller first (local callers hand the key on among themselves forever).
   */
  "c-handover-ignores-room": new Map([
    mutate(HANDOVER, 'if place and place ~= "" then', "if false then"),
  ]),
  /**
   * d (docs/SAFETY.md §2 RELEASE): a re-sent RELEASE whose first request handed the key to a
   * waiter (the `^` field's `from`) no longer recognises it, and reports the key held by another.
   */
  "d-resend-unrecognised": new Map([
    mutate(
      RELEASE,
      "if h and fields(h)[1] == current and fields(h)[4] == token then\n      released = 1",
      "if false then\n      released = 1",
    ),
  ]),
  /**
   * e (docs/SAFETY.md §6b I1): a done marker no longer ends the key's story — RECORD reads every key as absent
   * and ACQUIRE grants over a marker — so a kept response is neither replayed nor protected.
   */
  "e-done-ignored": new Map([
    mutate(RECORD, 'if redis.call("TYPE", key).ok ~= "string" then', "if true then"),
    mutate(
      ACQUIRE,
      "  currents[i] = current\n",
      '  if current and string.sub(current, 1, 5) == "done:" then\n    current = false\n  end\n  currents[i] = current\n',
    ),
  ]),
  /**
   * f (docs/SAFETY.md §4 Theorem 3): RESUME extends the ticket's token instead of swapping it, so a ticket is not
   * single-use: a message delivered twice resumes twice.
   */
  "f-resume-reusable": new Map([
    mutate(
      RESUME,
      'redis.call("SET", lockKey(i), fresh, "PX", keep)',
      'redis.call("PEXPIRE", lockKey(i), keep)',
    ),
  ]),
  /**
   * g (docs/SAFETY.md §4b M1): ACQUIRE looks at the first key of a set only, so a lock on several keys is
   * granted over a holder of another of its keys.
   */
  "g-multi-first-key-only": new Map([
    mutate(
      ACQUIRE,
      "local flag, wait, ahead = nil, -2, -1\nfor i = 1, n do",
      "local flag, wait, ahead = nil, -2, -1\nfor i = 1, 1 do",
    ),
  ]),
  /**
   * h (docs/SAFETY.md §4b M4): the fence of a lock on several keys is stored on the first key's counter
   * only, so a later lock on another of its keys may be issued a lower fence.
   */
  "h-multi-fence-first-counter": new Map(
    [ACQUIRE, RESUME, HANDOVER].map((script) =>
      mutate(
        script,
        'for i = 1, (triples()) do\n    redis.call("SET", fenceKey(i), f)',
        'for i = 1, 1 do\n    redis.call("SET", fenceKey(i), f)',
      ),
    ),
  ),
  /**
   * j (docs/SAFETY.md §5 J1): COMPLETE leaves the fence counter as it is, so every once()/scheduled occurrence
   * and every Idempotency-Key request with fencing leaves a counter that never expires.
   */
  "j-counter-never-expires": new Map([mutate(COMPLETE, "outlive(counter, retention)", "", true)]),
  /**
   * j (docs/SAFETY.md §5 J1), second half: a late fence raise that creates a counter beside a done marker
   * leaves it without expiry (the marker's PTTL is not given to it).
   */
  "j-late-raise-lasting-counter": new Map([
    mutate(
      FENCE_RAISE,
      'if not mine and left == -2 and string.sub(current, 1, 5) == "done:" then',
      "if false then",
    ),
  ]),
  /**
   * g22 (docs/SAFETY.md L3): ACQUIRE ignores the tombstone of a failed round, so a request of that round
   * that runs after its cleanup places the token and blocks the key, held by nobody, until its TTL.
   */
  "g22-late-acquire-places": new Map([
    mutate(
      ACQUIRE,
      'if discarded(void) then\n  return {0, redis.call("PTTL", void), -1}',
      'if false then\n  return {0, redis.call("PTTL", void), -1}',
    ),
  ]),
  /**
   * h22 (docs/SAFETY.md L3): RESUME ignores the tombstone of a failed resume, so a RESUME that runs after
   * its undo swaps the ticket's token away again: blocked by nobody, and the redelivery is lost.
   */
  "h22-late-resume-swaps": new Map([
    mutate(
      RESUME,
      'if string.find(redis.call("GET", void), fresh .. ",", 1, true) then',
      "if false then",
    ),
  ]),
  /**
   * g22 (docs/SAFETY.md L3), hand-overs: HANDOVER ignores the next holder's tombstone, so a HANDOVER that
   * runs after the failed hand-over's cleanup places the next holder's token, held by nobody.
   */
  "g22-late-handover-places": new Map([
    mutate(
      HANDOVER,
      "if discarded(void) then\n  local released = 0",
      "if false then\n  local released = 0",
    ),
  ]),
  /**
   * k22 (docs/SAFETY.md L3): a resume's undo keeps its tombstone (the ticket's record of failed resumes) for
   * the round's TTL only, though RESUME
   * places its token with max(TTL, the ticket's token's expiry): a RESUME running after the
   * tombstone expired swaps the ticket's token away while the lock's longer lease lasts.
   */
  "k22-undo-tombstone-round-ttl": new Map([
    mutate(
      DISCARD,
      'redis.call("SET", void, record, "PX", keep)',
      'redis.call("SET", void, record, "PX", keepMs)',
    ),
  ]),
  /**
   * l22 (docs/SAFETY.md §2 "DISCARD"): a resume's undo that finds the fresh token with no time left (PTTL 0 inside the
   * script) puts the ticket's token back without any expiry. Not reachable by a schedule (the
   * simulated clock never stops on an expiry there); `test/sim/node/undo-expiry.test.ts` runs it.
   */
  "l22-undo-without-expiry": new Map([
    mutate(
      DISCARD,
      'redis.call("DEL", key)\n      unhold(i, token)\n      serve(i, lo, token, nil, "")',
      'if restore then\n        redis.call("SET", key, restore)\n      else\n        redis.call("DEL", key)\n      end\n      unhold(i, token)\n      serve(i, lo, token, nil, "")',
    ),
  ]),
  /**
   * q1 (docs/SAFETY.md §2 P3): a hand-off overstates the gap since the look's registration ran
   * (by 50 ms), so the waiter counts the node's token as lasting longer than it does.
   */
  "q1-gap-overstated": new Map(
    [ACQUIRE, RELEASE, HANDOVER, DISCARD, PASS].map((script) =>
      mutate(script, "local gap = lo - tonumber(f[5])\n", "local gap = lo - tonumber(f[5]) + 50\n"),
    ),
  ),
  /**
   * q2 (docs/SAFETY.md §2 P3): a late registration of an older look replaces the record of a
   * newer one (its `p` and look), so a hand-off names a look a pass made the call stop counting.
   * Liveness only, so no schedule finds it: the record's look, `p` and `handMs` come from one
   * registration, so the message's bound stays sound and `^` gets the look the message names
   * (what a late pass is compared with); the call counts the token when its next look finds it,
   * well within the liveness checks' slack. `test/sim/node/register-newest.test.ts` runs the
   * script sequence instead.
   */
  "q2-register-older-look": new Map(
    [ACQUIRE, PASS].map((script) =>
      mutate(
        script,
        "if old and tonumber(fields(old)[4]) >= tonumber(r.look) then",
        "if false then",
      ),
    ),
  ),
  /**
   * q3 (docs/SAFETY.md §2 PASS, P4): PASS removes the token even where a look numbered at or after
   * it already placed or found it there (a late pass deletes what the call counted). Regression
   * `q3-late-pass-after-look` (constructed).
   */
  "q3-pass-ignores-look": new Map([
    mutate(
      PASS,
      "if f and f[1] == token and tonumber(f[3]) < tonumber(reg.look) then",
      "if true then",
    ),
  ]),
  /**
   * q8 (docs/SAFETY.md §2 EXTEND, P4): an extension leaves the holder's record as its last look
   * set it, so a pass the call sent before its grant, running late, removes a token the
   * extension counted. Regression `q8-late-pass-after-extend` (found by a campaign, seed 20261261).
   */
  "q8-extend-not-marked": new Map([
    mutate(EXTEND, "if who == token and look ~= HELD then", "if false then"),
  ]),
  /**
   * q10 (docs/SAFETY.md §2 ACQUIRE, P4): a look that finds its token where no holder record names
   * it (the queue expired under an extended grant) records its own look, however old: a late
   * pass numbered after it then removes what the extension counted. The simulation's workloads
   * do not hold an extended grant past its queue's life with a late look and pass in flight, so
   * `test/scripts/queue-scripts.test.ts` and `semaphore-scripts.test.ts` run the sequence.
   */
  "q10-found-writes-its-look": new Map(
    [ACQUIRE, SEM_ACQUIRE].map((script) =>
      mutate(
        script,
        `holder(i, token, place or "", "${HELD_LOOK}", "")`,
        `holder(i, token, place or "", reg and reg.look or 0, "")`,
      ),
    ),
  ),
  /**
   * q11 (docs/SAFETY.md §2 PASS, §6 "The queue"): a pass hands the key to the queue's first live
   * waiter even when it was placed after the passer (the rule before: any waiter). A pass sent on
   * a look that saw an earlier holder, while that holder's release was already handing the
   * passer the key, gave it to a later caller. Regression `q11-pass-to-later-waiter` (found by
   * the campaign at seed 20261290, schedule 8,412): "queue-order".
   */
  "q11-pass-to-later-waiter": new Map([
    mutate(
      PASS,
      `if head(1, lo, token, limit) or not head(1, lo, token, nil) then
      redis.call("DEL", lockKey(1))
      unhold(1, token)
      passed = 1
      current = false
      serve(1, lo, token, limit, token)`,
      `if true then
      redis.call("DEL", lockKey(1))
      unhold(1, token)
      passed = 1
      current = false
      serve(1, lo, token, nil, token)`,
    ),
  ]),
  /**
   * q9 (docs/SAFETY.md §2 PASS, P4): PASS removes the token where the queue records no holder
   * (the rule before the fix: only a record of a newer look kept it), though the queue may have
   * expired under an extended grant. No schedule outlives a queue that way within a run's
   * leases; `test/scripts/queue-scripts.test.ts` runs the script sequence instead.
   */
  "q9-pass-without-record": new Map([
    mutate(
      PASS,
      "if f and f[1] == token and tonumber(f[3]) < tonumber(reg.look) then",
      "if not (f and f[1] == token and tonumber(f[3]) >= tonumber(reg.look)) then",
    ),
  ]),
  /**
   * q4 (docs/SAFETY.md §2 ACQUIRE, P2): a look that finds its token there does not raise the
   * newest look recorded in `^`, so a late pass sent before that look removes what it counted.
   * Regression `q4-late-pass-after-find` (constructed).
   */
  "q4-found-look-not-raised": new Map([
    mutate(ACQUIRE, "if reg and tonumber(reg.look) > tonumber(f[3]) then", "if false then"),
  ]),
  /**
   * q5 (docs/SAFETY.md §2 DISCARD, L3): DISCARD leaves the call's queue record, so a release
   * after the call's cleanup hands the key to it (placed after its cleanup: nobody holds it).
   */
  "q5-discard-keeps-record": new Map([
    mutate(
      DISCARD,
      '  if isQueue(i) then\n    redis.call("HDEL", roomKey(i), token)\n  end\n  if current == token then\n    found = 1',
      "  if current == token then\n    found = 1",
    ),
  ]),
  /**
   * q6 (docs/SAFETY.md §2 P4, §6 "The queue"): ACQUIRE tells a holder's place only when it is placed
   * strictly before the caller — places compared alone, what the client did before — so of a
   * split between callers placed in the same ms none is told and none passes until their waits
   * end. Regression `q6-tie-split` (constructed).
   */
  "q6-tie-by-place-alone": new Map([
    mutate(
      ACQUIRE,
      "if at and (limit == nil or at < limit[1] or (at == limit[1] and current < token)) then",
      "if at and (limit == nil or at < limit[1]) then",
    ),
  ]),
  /**
   * q7 (docs/SAFETY.md §2 RELEASE, §6 "The queue"): RELEASE with `before` serves only waiters
   * placed strictly before the instance's next caller, so when that caller waits in the nodes'
   * queue itself the key stays free until its refresh (`retryDelayMax`). Regression
   * `q7-release-same-ms` (constructed).
   */
  "q7-release-before-strict": new Map([
    mutate(RELEASE, 'limit = {tonumber(before) + 1, ""}', 'limit = {tonumber(before), ""}'),
  ]),
  /**
   * r43 (docs/SAFETY.md §2 RELEASE, L3): RELEASE writes no tombstone, so an acquire request of a
   * granted round that timed out on a node and reaches it after the release places the token
   * there for its TTL (held by nobody).
   */
  "r43-release-without-tombstone": new Map([
    mutate(
      RELEASE,
      'if void then\n  redis.call("SET", void, "1", "PX", keepMs)',
      'if false then\n  redis.call("SET", void, "1", "PX", keepMs)',
    ),
  ]),
} satisfies Record<string, ScriptOverrides>;

/** The scripts' mutants: the lock's, then the semaphore's (`semaphore-mutants.ts`). */
export const MUTANTS = { ...LOCK_MUTANTS, ...SEMAPHORE_MUTANTS };

/** The lock client's mutants: changes to the library's source, in every client realm. */
const LOCK_CLIENT_MUTANTS = {
  /**
   * docs/SAFETY.md §3 "extend, lost": an extension round that the handle's loss outlived leaves
   * its token on the nodes for the new TTL, held by nobody. Regression `x-extend-outlived-loss`:
   * a waiter gives up while the key is free of grants (liveness).
   */
  "x-lost-keeps-extension": [
    {
      file: "src/lock/handle.ts",
      from: 'if (this.#life.now() === "lost" && !round.outcomes.every(isGone)) this.#dropAtValidityEnd();',
      to: "",
    },
  ],
  /**
   * docs/SAFETY.md §6 "The queue": a pass keeps the aheads of the look it acted on, so the next
   * stall passes again without looking. Regression `x-pass-on-stale-look`: "queue-order".
   */
  "x-pass-keeps-aheads": [
    {
      file: "src/lock/wait/lock-side.ts",
      from: "      aheads.clear();\n",
      to: "",
    },
  ],
} satisfies Record<string, readonly SourcePatch[]>;

/** The client's mutants: the lock's, then the semaphore's. */
export const CLIENT_MUTANTS = { ...LOCK_CLIENT_MUTANTS, ...SEMAPHORE_CLIENT_MUTANTS };

/** Name of a mutant of the scripts. */
export type MutantName = keyof typeof MUTANTS;

/** Name of any mutant: of the scripts, or of the client's source (`CLIENT_MUTANTS`). */
export type AnyMutantName = MutantName | keyof typeof CLIENT_MUTANTS;

/** Every mutant's name (the CLI's `--mutant`). */
export const MUTANT_NAMES: readonly AnyMutantName[] = [
  ...(Object.keys(MUTANTS) as MutantName[]),
  ...(Object.keys(CLIENT_MUTANTS) as (keyof typeof CLIENT_MUTANTS)[]),
];

/**
 * How a run brings mutant `name` back: the nodes' scripts it replaces, or the changes to the
 * library's source in the client realms.
 *
 * @example
 * await runSchedule(spec, mutantRun("s-count-across-slots"));
 */
export function mutantRun(name: AnyMutantName): {
  overrides?: ScriptOverrides;
  patches?: readonly SourcePatch[];
} {
  return name in CLIENT_MUTANTS
    ? { patches: CLIENT_MUTANTS[name as keyof typeof CLIENT_MUTANTS] }
    : { overrides: MUTANTS[name as MutantName] };
}
