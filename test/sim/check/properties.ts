/**
 * The properties every simulated schedule is checked against (docs/SAFETY.md §7):
 *
 * 1. with durable nodes, no two holders' `[granted, end]` intervals overlap;
 * 2. fences strictly increase in grant order, and the fenced store never accepts a stale write;
 * 3. the non-atomic read-modify-write under the lock loses no update;
 * 4. after quiescence only done markers, fence counters and expiring tombstones remain on the
 *    nodes, and a done marker's fence counter expires, no earlier than the marker (`counters.ts`);
 * 5. on fault-free schedules, a waiter whose wait outlasts the contention gets the lock, no
 *    other instance's run of later callers overtakes a waiter by more than the documented bound
 *    (`HANDOVER_RUN_MAX` + 1; a waiter for a lock on several keys has liveness, no such bound),
 *    and a waiter for one key whose registration reached every node is overtaken only by calls
 *    placed before it ("queue-order", docs/SAFETY.md §6 "The queue");
 * 6. no key is blocked by nobody: held on a majority by tokens placed after their own cleanup
 *    (a failed round's DISCARD) or release ran there (docs/SAFETY.md L3; the bound is zero once
 *    the cleanup or release reached the node); a semaphore's slots are lock keys here, and a
 *    permit call's every end writes its tombstone (no exception);
 * 7. semaphores (docs/SAFETY.md §4c, `semaphore-props.ts`): no two permits of one slot overlap,
 *    at no instant more permits are held than the largest P granted, a permit's slot is below its
 *    P (Theorem 5), and no node ever holds one token on two slots (S1);
 * 8. on fault-free schedules without link cuts or delayed windows, permit waiters
 *    (`permit-waits.ts`): "permit-liveness" (no give-up with capacity idle for the slack) and
 *    "permit-order" (overtaken only as docs/SAFETY.md §4c "Order" allows);
 * plus what the library must never do under any faults: an error of an unexpected kind, a release
 * of a valid lock reported `expired`, a grant after the caller aborted, a second run of a `once()`
 * job after a recorded run, and for Idempotency-Key requests a second run after a kept response
 * or after any answer below 500 unless its record failed, the app was told and its claim ran out,
 * a replay that is not a successful run's response for the same body, a 422 without another body.
 *
 * Properties 1–3 come from the real-server safety checker (`test/safety/harness/checker.ts`). A
 * violation in a schedule where a node restarted empty (assumption A2 broken) is classified as the
 * README's expected hazard, never as a bug; a bug anywhere else fails the run.
 *
 * @module
 */

import { HANDOVER_RUN_MAX } from "../../../src/lock/wait/queue";
import { checkHistory, intervalEnd, type Violation } from "../../safety/harness/checker";
import type { GrantRecord, History, ResourceState, Wipe } from "../../safety/harness/history";
import type { KeyState, RoomVisit, TokenEnd } from "../runtime/cluster";
import type { Observations, WaitRecord } from "../workload/actor";
import { type Leftover, oneShotCounters } from "./counters";
import { type Freeze, permitLiveness, permitOrder } from "./permit-waits";
import { queuedUntil, REGISTERED_WITHIN } from "./queued-until";
import { checkPermits, oneSlotPerToken } from "./semaphore-props";

export { REGISTERED_WITHIN };

/** One finding, classified. */
export interface Finding {
  readonly property: string;
  readonly detail: string;
}

/** Result of checking one schedule. */
export interface Verdict {
  readonly bugs: readonly Finding[];
  /** Violations explained by an empty restart (the README's predicted hazard). */
  readonly hazards: readonly Finding[];
  readonly grants: number;
  /** Permits of the semaphore workload. */
  readonly permits: number;
}

/** What the checks need besides the observations. */
export interface CheckInput {
  readonly observed: Observations;
  readonly resource: Readonly<Record<string, ResourceState>>;
  readonly wipes: readonly Wipe[];
  /** Keys left on each node after quiescence, with their values. */
  readonly remaining: readonly Leftover[];
  /** Fault-free schedule (no request faults, no pauses, no restarts): liveness is checked. */
  readonly faultFree: boolean;
  /** Longest a free key may stay unused while someone waits (retries, reservations, drift). */
  readonly livenessSlack: number;
  /**
   * Longest a key may stay free on a majority of nodes before a waiter in its queue gives up
   * (see {@link queueIdle}): well under `retryDelayMax`, well over a few round trips.
   */
  readonly queueIdle: number;
  /** Bound on how far two instances' epoch clocks may be apart (places are epoch ms). */
  readonly skew: (at: number) => number;
  /** Each node's clock rate (its ms per virtual ms; all 1 when not given): see {@link queuedUntil}. */
  readonly nodeRates?: readonly number[] | undefined;
  /** What the nodes' lock keys held over time (see {@link blockedByNobody}). */
  readonly nodeHistory?: NodeHistory | undefined;
  /**
   * The processes that froze (`PermitWaitInput.freezes`), when permit waiters are judged on a
   * fault-free schedule; not given (a named schedule's link cuts or delayed windows, which
   * `faultFree` does not see): they are not.
   */
  readonly freezes?: readonly Freeze[] | undefined;
}

/** The lock keys' values on every node over time, and where each token's release or discard ran. */
export interface NodeHistory {
  readonly states: readonly KeyState[];
  readonly ends: readonly TokenEnd[];
  readonly nodes: number;
  readonly quorum: number;
  /** The lock keys' prefix on the nodes (a wait's key `k0` is the nodes' `<prefix>k0`). */
  readonly prefix: string;
  /** The semaphore looks and passes that ran (for "permit-order"). */
  readonly visits?: readonly RoomVisit[] | undefined;
}

const describe = (v: Violation): string => `${v.kind} on ${v.key}: ${JSON.stringify(v)}`;

/**
 * Check one schedule's observations.
 *
 * @example
 * const { bugs, hazards } = checkSchedule(input);
 */
export function checkSchedule(input: CheckInput): Verdict {
  const bugs: Finding[] = [];
  const hazards: Finding[] = [];
  const { observed, wipes } = input;
  const history: History = {
    grants: observed.grants,
    resource: input.resource,
    wipes,
    leftovers: [],
    clockError: { main: 0 },
  };
  for (const violation of checkHistory(history).violations) {
    const finding = { property: violation.kind, detail: describe(violation) };
    (wipes.length > 0 ? hazards : bugs).push(finding);
  }
  for (const left of input.remaining) {
    const value = left.value ?? "";
    if (left.key.endsWith(":fence") || value.startsWith("done:")) continue;
    // A tombstone (L3) lives its round's TTL from the release or cleanup that wrote it, which
    // may outlast the settling time (a 30 s lease); it always expires.
    if (left.key.includes(":void:") && (left.pttl ?? -1) >= 0) continue;
    bugs.push({ property: "quiescence", detail: `node ${left.node}: ${left.key} = ${value}` });
  }
  bugs.push(...oneShotCounters(input.remaining));
  for (const problem of observed.problems) {
    const finding = { property: problem.kind, detail: `${problem.detail} at ${problem.at}` };
    // A release finds a wiped node's token gone: `expired` is then what happened there.
    const wiped = problem.kind === "release-misreported" && wipes.length > 0;
    (wiped ? hazards : bugs).push(finding);
  }
  for (const finding of onceRuns(observed)) (wipes.length > 0 ? hazards : bugs).push(finding);
  for (const finding of idempotentRuns(observed)) {
    (wipes.length > 0 ? hazards : bugs).push(finding);
  }
  if (input.nodeHistory !== undefined) {
    for (const finding of blockedByNobody(input.nodeHistory)) {
      (wipes.length > 0 ? hazards : bugs).push(finding);
    }
    // S1 is kept by every script on its own, whatever a node lost before it ran.
    bugs.push(...oneSlotPerToken(input.nodeHistory.states));
  }
  for (const finding of checkPermits(observed.permits)) {
    (wipes.length > 0 ? hazards : bugs).push(finding);
  }
  if (input.faultFree) {
    bugs.push(...liveness(input), ...fairness(input), ...queueOrder(input), ...queueIdle(input));
  }
  if (input.faultFree && input.freezes !== undefined) {
    const { livenessSlack, nodeRates, freezes, nodeHistory: nodes } = input;
    const waits = observed.permitWaits ?? [];
    const permits = { permits: observed.permits, waits, livenessSlack, nodeRates, freezes, nodes };
    bugs.push(...permitLiveness(permits), ...permitOrder(permits));
  }
  return { bugs, hazards, grants: observed.grants.length, permits: observed.permits.length };
}

const TOKEN = /^[0-9a-f]{32}$/;

/**
 * No key is blocked by nobody beyond the documented bound (docs/SAFETY.md L3): a failed round's
 * token holds a node at most until the round's cleanup runs there, and a grant's token no longer
 * than its release there. A token placed on a node *after* its cleanup or release ran there (a
 * late or re-sent request of the round or queued call), while that script's tombstone lasted
 * (a release without one: for ever), is held by nobody and nothing of ours would remove it
 * before its TTL; a majority of nodes holding such tokens for any length of time is a finding.
 * (Documented exceptions, not checked: a cleanup that never reached a node, and a request that
 * runs more than the tombstone's life — the round's TTL — after the cleanup or release; a
 * resume's undo has no such exception, its tombstone outliving the ticket's token a late RESUME
 * could swap.)
 */
function blockedByNobody(history: NodeHistory): Finding[] {
  const ended = new Map<string, TokenEnd[]>();
  for (const end of history.ends) {
    const id = `${end.node} ${end.token}`;
    const ends = ended.get(id);
    if (ends === undefined) ended.set(id, [end]);
    else ends.push(end);
  }
  // Placed after a cleanup ran there, while that cleanup's tombstone lasted.
  const afterCleanup = (node: number, token: string, placed: number) =>
    (ended.get(`${node} ${token}`) ?? []).some((e) => e.at <= placed && placed < e.until);
  // Per key: the intervals in which a node held a token placed after that token's end there.
  const orphans = new Map<string, Array<{ node: number; from: number; to: number }>>();
  const byNode = new Map<string, KeyState[]>();
  for (const state of history.states) {
    const id = `${state.node} ${state.key}`;
    const states = byNode.get(id);
    if (states === undefined) byNode.set(id, [state]);
    else states.push(state);
  }
  for (const states of byNode.values()) {
    states.forEach((state, i) => {
      const { value, node, key } = state;
      if (value === null || !TOKEN.test(value)) return;
      const previous = states[i - 1];
      // The same token with a new expiry (extended, or a re-sent request): placed earlier.
      const placed =
        previous !== undefined && previous.value === value && previous.expiresAt > state.at
          ? undefined
          : state.at;
      if (placed === undefined || !afterCleanup(node, value, placed)) return;
      const next = states[i + 1];
      const to = Math.min(next?.at ?? Number.POSITIVE_INFINITY, state.expiresAt);
      if (to <= placed) return;
      const list = orphans.get(key) ?? [];
      list.push({ node, from: placed, to });
      orphans.set(key, list);
    });
  }
  const found: Finding[] = [];
  for (const [key, intervals] of orphans) {
    const marks = intervals
      .flatMap((o) => [
        { at: o.from, step: 1 },
        { at: o.to, step: -1 },
      ])
      .sort((a, b) => a.at - b.at || a.step - b.step);
    let count = 0;
    let since: number | undefined;
    let longest = { from: 0, ms: 0 };
    for (const mark of marks) {
      count += mark.step;
      if (count >= history.quorum && since === undefined) since = mark.at;
      if (count < history.quorum && since !== undefined) {
        if (mark.at - since > longest.ms) longest = { from: since, ms: mark.at - since };
        since = undefined;
      }
    }
    if (longest.ms > 0) {
      const nodes = [...new Set(intervals.map((o) => o.node))].join(", ");
      found.push({
        property: "blocked-by-nobody",
        detail: `${key} held on a majority by tokens placed after their cleanup or release ran there (nodes ${nodes}), for ${Math.round(longest.ms)} ms from ${Math.round(longest.from)}`,
      });
    }
  }
  return found;
}

/** A job that ran again after a run that ended with its done marker recorded. */
function onceRuns(observed: Observations): Finding[] {
  const found: Finding[] = [];
  const recordedEnd = new Map<string, number>();
  for (const run of [...observed.jobs].sort((a, b) => a.at - b.at)) {
    const end = recordedEnd.get(run.job);
    if (end !== undefined && run.at > end) {
      found.push({ property: "once", detail: `${run.job} ran again at ${run.at} (done ${end})` });
    }
    if (run.recorded === true && run.endedAt !== undefined) {
      recordedEnd.set(run.job, Math.min(end ?? Infinity, run.endedAt));
    }
  }
  return found;
}

/**
 * Idempotency-Key (docs/SAFETY.md §6b I1, I2): no run of a key starts after a run of it whose response was kept on
 * a majority; every replay is the response of a successful run of that key for the same body;
 * a 422 answers only a body that differs from a successful run's.
 */
function idempotentRuns(observed: Observations): Finding[] {
  const found: Finding[] = [];
  const storedEnd = new Map<string, number>();
  for (const run of [...observed.idempotentRuns].sort((a, b) => a.at - b.at)) {
    const end = storedEnd.get(run.key);
    if (end !== undefined && run.at > end) {
      found.push({
        property: "idempotent-once",
        detail: `${run.key} ran again at ${run.at} (kept ${end})`,
      });
    }
    if (run.stored === true && run.endedAt !== undefined) {
      storedEnd.set(run.key, Math.min(end ?? Infinity, run.endedAt));
    }
  }
  found.push(...idempotentAnswered(observed));
  const succeeded = observed.idempotentRuns.filter((r) => !r.fail);
  for (const answer of observed.idempotentAnswers) {
    if (answer.kind === "replay") {
      const source = succeeded.find((r) => r.answer === answer.replayed);
      if (source === undefined || source.key !== answer.key || source.body !== answer.body) {
        const detail = `${answer.key} (body ${answer.body}) replayed "${answer.replayed}" at ${answer.at}`;
        found.push({ property: "idempotent-replay", detail });
      }
    } else if (answer.kind === "422") {
      const other = succeeded.some((r) => r.key === answer.key && r.body !== answer.body);
      if (!other) {
        const detail = `${answer.key} (body ${answer.body}) got 422 at ${answer.at} without another body's run`;
        found.push({ property: "idempotent-422", detail });
      }
    }
  }
  return found;
}

/**
 * Idempotency-Key, SAFETY.md §6b I1, with retried requests: after a run answered a kept status (below
 * 500), no run of its key starts unless its record failed to reach a majority — and then only
 * when the app was told (`onUnrecorded`) and the run's claim had run out (its validity end): the
 * claim is never given up before the record is on a majority. Every request the run sent may
 * have run; a failed record round must be re-sent, not dropped.
 */
function idempotentAnswered(observed: Observations): Finding[] {
  const found: Finding[] = [];
  const runs = [...observed.idempotentRuns].sort((a, b) => a.at - b.at);
  for (const [i, first] of runs.entries()) {
    const { endedAt, status } = first;
    if (endedAt === undefined || status === undefined || status >= 500) continue;
    if (first.stored === true) continue; // "idempotent-once" covers a kept record
    for (const later of runs.slice(i + 1)) {
      if (later.key !== first.key || later.at < endedAt) continue;
      const why =
        first.told !== true
          ? "its record was not kept and nobody was told"
          : later.at < (first.claimEnd ?? Infinity)
            ? `its claim was given up before its validity end ${first.claimEnd}`
            : undefined;
      if (why === undefined) continue;
      const detail = `${later.key} ran again at ${later.at} after a run answered ${status} at ${endedAt}: ${why}`;
      found.push({ property: "idempotent-once", detail });
    }
  }
  return found;
}

const grantsOf = (observed: Observations, key: string): GrantRecord[] =>
  observed.grants.filter((g) => g.key === key).sort((a, b) => a.granted - b.granted);

/** 5a: a waiter gave up although the key was free for longer than the slack before it did. */
function liveness(input: CheckInput): Finding[] {
  const found: Finding[] = [];
  for (const w of input.observed.waits) {
    const end = w.end;
    if (w.outcome !== "LockBusyError" || end === undefined) continue;
    if (w.requested + input.livenessSlack >= end) continue; // it waited less than the slack
    // A waiter for several keys is kept waiting by a grant on any of them.
    const busy = (w.keys ?? [w.key]).some((key) =>
      grantsOf(input.observed, key).some(
        (g) => g.granted < end && intervalEnd(g) + input.livenessSlack > end,
      ),
    );
    if (!busy) {
      // "Free" of grants: a key split between waiters' placements is held by no call.
      found.push({
        property: "liveness",
        detail: `waiter of instance ${w.instance} on ${w.key} (${w.requested}–${w.end}) gave up with no grant of the key for ${input.livenessSlack} ms (free, or split between waiters)`,
      });
    }
  }
  return found;
}

/** 5b: another instance's run of callers placed after a waiter overtook it beyond the bound. */
function fairness(input: CheckInput): Finding[] {
  const found: Finding[] = [];
  const bound = HANDOVER_RUN_MAX + 1;
  for (const w of input.observed.waits) {
    // No order is promised to a waiter for several keys (docs/SAFETY.md §6): it polls, and
    // callers for any one of its keys may go first.
    if (w.end === undefined || w.keys !== undefined) continue;
    const run = longestRun(input, w);
    if (run.length > bound) {
      found.push({
        property: "fairness",
        detail: `waiter of instance ${w.instance} on ${w.key} (${w.requested}–${w.end}) overtaken by ${run.length} consecutive later callers of instance ${run.instance} (bound ${bound})`,
      });
    }
  }
  return found;
}

/**
 * The latest time before `end` at which a caller ahead of waiter `w` in its instance's line for
 * the key (same instance and key, called before it) stopped waiting without a grant — gave up or
 * was aborted — or 0. Only the line's first caller looks at the nodes and registers there
 * (docs/SAFETY.md §6 "The local line"): `w` may become first, and register, only then, as after a
 * grant of its instance (whose release moves `first` in {@link queueOrder}). A lower bound on that
 * moment (another caller ahead may still have waited), so no overtaking is excused that the
 * property would otherwise catch once `w` is first. (Seed 20261181: a waiter placed at 5 ms was
 * second behind its instance's caller of 0 ms, which was aborted at 269 and DISCARDed; the
 * waiter's first look, at 271, had no record on any node yet, and a `wait: 0` caller of another
 * instance placed on the free key at 271–273 as P1 allows. Without this the property dated the
 * waiter's registration from 5 ms.) Ties of the call time are left out: the line orders a tie by
 * joining, which the observations do not tell, and leaving them out only flags more.
 */
function aheadGaveUp(observed: Observations, w: WaitRecord, end: number): number {
  let latest = 0;
  for (const o of observed.waits) {
    if (o === w || o.instance !== w.instance || o.key !== w.key || o.keys !== undefined) continue;
    if (o.requested >= w.requested || o.outcome === "granted" || o.end === undefined) continue;
    if (o.end < end) latest = Math.max(latest, o.end);
  }
  return latest;
}

/**
 * 5c (docs/SAFETY.md §6 "The queue"): a waiter for one key whose registration reached every node
 * is overtaken only by calls placed before it (up to the clock offsets between instances) and by
 * a ticket's lock resumed. Callers that do not queue (a lock on several keys) place only on a key
 * free of live waiters placed before them, and hand-overs serve those waiters first: no exception.
 * A waiter of a line becomes first in it, and registers, when the caller before it of its
 * instance gives up, is aborted, or is granted and that holder releases (or its lease ends) —
 * whether that holder was granted before the waiter's call or after it: until then the waiter
 * has no record on any node, and the nodes place a caller that does not queue on a free key (P1).
 */
function queueOrder(input: CheckInput): Finding[] {
  const found: Finding[] = [];
  const { observed } = input;
  for (const w of observed.waits) {
    if (w.end === undefined || w.keys !== undefined) continue;
    const end = Math.min(w.end, queuedUntil(w, input.nodeRates));
    let first = Math.max(w.requested, aheadGaveUp(observed, w, end));
    for (const g of grantsOf(observed, w.key)) {
      if (g.granted >= end) continue;
      const owner = observed.owner.get(g.id) ?? -1;
      if (owner === w.instance) {
        // The line's holder asks the nodes for the next only when it releases (or expires):
        // also a holder granted before the waiter's call and still holding at it, which the
        // waiter queues behind in its instance without a record on any node (seed 20261180).
        first = Math.max(first, g.releaseStart ?? intervalEnd(g));
        continue;
      }
      if (g.granted <= w.requested) continue;
      // A resume takes a ticket's lock over: no caller placed after the waiter.
      if (observed.resumes?.has(g.id)) continue;
      if (g.granted <= first + REGISTERED_WITHIN) continue;
      if (g.requested <= w.requested + input.skew(g.requested)) continue;
      found.push({
        property: "queue-order",
        detail: `waiter of instance ${w.instance} on ${w.key} (${w.requested}–${end}, first in its line from ${first}) overtaken by ${g.id} placed at ${g.requested}, granted ${g.granted}`,
      });
    }
  }
  return found;
}

/**
 * 5d (docs/SAFETY.md §6 "The queue"): a waiter in a key's queue does not give up while the key
 * stood free on a majority of nodes for `queueIdle` before its wait ended. Every script that
 * frees the key (a release, a pass, a cleanup) hands it to the queue's first live waiter in the
 * same script, and a release that keeps it free for its instance's next caller (`before`) is
 * followed by that caller's look a round trip later, so on a fault-free schedule a key free for
 * longer while someone waits in the queue is a release that served nobody. The slack covers what
 * frees the key with no script (an expiry: the waiters look at the expiry they read, within the
 * clocks' rates of it) and a record that the nodes' clocks end before the client's wait (rates
 * again: 1% of the wait). The 5a check, with its slack of seconds, cannot see a gap of one
 * refresh (`retryDelayMax`), which is what a release serving nobody costs
 * (regression `q7-release-same-ms`).
 */
function queueIdle(input: CheckInput): Finding[] {
  const history = input.nodeHistory;
  if (history === undefined) return [];
  const found: Finding[] = [];
  for (const w of input.observed.waits) {
    if (w.outcome !== "LockBusyError" || w.end === undefined || w.keys !== undefined) continue;
    // The nodes drop its record at its wait time, whenever its caller hears of the give-up.
    const end = Math.min(w.end, w.requested + w.wait);
    const from = end - input.queueIdle;
    // Registered on every node before the key became free (its first look and the streams).
    if (from <= w.requested + REGISTERED_WITHIN) continue;
    const key = `${history.prefix}${w.key}`;
    let free = 0;
    for (let node = 0; node < history.nodes; node++) {
      if (freeThroughout(history.states, node, key, from, end)) free++;
    }
    if (free >= history.quorum) {
      found.push({
        property: "queue-idle",
        detail: `waiter of instance ${w.instance} on ${w.key} (${w.requested}–${w.end}) gave up with the key free on ${free} nodes for at least ${input.queueIdle} ms`,
      });
    }
  }
  return found;
}

/** `key` held no value on `node` at any time in [from, to] (never set, deleted or expired). */
function freeThroughout(
  states: readonly KeyState[],
  node: number,
  key: string,
  from: number,
  to: number,
): boolean {
  let before: KeyState | undefined;
  for (const state of states) {
    if (state.node !== node || state.key !== key) continue;
    if (state.at <= from) before = state;
    else if (state.at <= to && state.value !== null && state.expiresAt > state.at) return false;
  }
  return before === undefined || before.value === null || before.expiresAt <= from;
}

function longestRun(input: CheckInput, w: WaitRecord): { length: number; instance: number } {
  let best = { length: 0, instance: -1 };
  let current = { length: 0, instance: -1 };
  for (const g of grantsOf(input.observed, w.key)) {
    if (g.granted <= w.requested || g.granted >= (w.end as number)) continue;
    // A poller has no bound against a caller that found its own instance idle (SAFETY.md §6):
    // such a grant neither counts nor breaks a run.
    if (!w.listens && input.observed.soloGrants.has(g.id)) continue;
    const owner = input.observed.owner.get(g.id) ?? -1;
    const later = g.requested > w.requested + input.skew(g.requested);
    if (owner === w.instance || !later) {
      current = { length: 0, instance: -1 };
      continue;
    }
    current =
      owner === current.instance
        ? { length: current.length + 1, instance: owner }
        : {
            length: 1,
            instance: owner,
          };
    if (current.length > best.length) best = current;
  }
  return best;
}
