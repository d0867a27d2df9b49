/**
 * Liveness and order for permit waiters (docs/SAFETY.md §4c "Waiting"): what the lock's
 * "liveness" and "queue-order" (`properties.ts` 5a, 5c) say of a lock's waiters, said of a
 * semaphore's, on fault-free schedules only (calm, no restarts, no named schedule's link cuts or
 * delayed windows).
 *
 * - **permit-liveness**: a waiter does not give up while capacity it could take stood idle for
 *   the slack ({@link permitLiveness});
 * - **permit-order**: a registered waiter is overtaken only where §4c "Order" allows
 *   ({@link permitOrder}).
 *
 * @module
 */

import { intervalEnd } from "../../safety/harness/checker";
import type { KeyState } from "../runtime/cluster";
import type { Finding, NodeHistory } from "./properties";
import { type QueuedWaiter, queuedUntil, REGISTERED_WITHIN } from "./queued-until";
import type { PermitRecord } from "./semaphore-props";

/** A permit call that waited (`wait` > 0), granted or not; times in global virtual ms. */
export interface PermitWait extends QueuedWaiter {
  readonly instance: number;
  /** The semaphore's name. */
  readonly semaphore: string;
  /** Its instance's P for the semaphore: it looks at, and is handed, only slots below it. */
  readonly permits: number;
  /** Its place in the room: its instance's `Date.now()` at the call (`PermitRecord.place`). */
  readonly place?: number | undefined;
  /** Granted, or given up (the error's name), at `end`. */
  outcome?: string;
  end?: number;
  /** Its permit's id when granted. */
  grant?: string | undefined;
}

/** A process that froze at `at` (global ms): its streams stay open, none of its code runs. */
export interface Freeze {
  readonly instance: number;
  readonly at: number;
}

/** What the permit waiters' properties read. */
export interface PermitWaitInput {
  readonly permits: readonly PermitRecord[];
  readonly waits: readonly PermitWait[];
  /** Longest capacity may stand idle while someone waits (the lock's `livenessSlack`). */
  readonly livenessSlack: number;
  /** Each node's clock rate (all 1 when not given): see `queuedUntil`. */
  readonly nodeRates?: readonly number[] | undefined;
  readonly freezes: readonly Freeze[];
  /** The nodes' slot keys and the semaphore scripts that ran (see {@link permitOrder}). */
  readonly nodes?: NodeHistory | undefined;
}

/**
 * "permit-liveness" (the lock's 5a): a permit waiter that gave up (`SemaphoreBusyError`) after
 * waiting longer than the slack, although at every instant of the slack before it gave up fewer
 * than its P permits on slots below its P were within their intervals.
 *
 * Only those slots count, and only against its own P: an instance with P = 2 never looks at
 * slot 2 of a deploy's P = 3, so a permit there leaves it as free as before, while a permit on
 * slot 0 granted to an instance with another P holds its slot 0 all the same (slots are named by
 * index, not by P: docs/SAFETY.md §4c "Places"). Intervals are closed here (a permit held no
 * time used its slot at that instant; one ending when another starts counts with it): only
 * capacity that stood idle is flagged. "Idle" includes a slot split between waiters' placements
 * and held by no call, which on a fault-free schedule is resolved well within the slack (§4c
 * "Splits").
 *
 * Not judged: a wait that ended after a process froze that was then in a call of the same
 * semaphore (waiting, or holding a permit it had not released): a frozen waiter with its streams
 * open keeps each slot handed to it for the hand-off's TTL, and a frozen holder keeps its slot
 * past the validity end its caller last recorded (an extension since). A freeze of an instance
 * idle on that semaphore changes nothing there.
 *
 * @example
 * bugs.push(...permitLiveness(input));
 */
export function permitLiveness(input: PermitWaitInput): Finding[] {
  const found: Finding[] = [];
  for (const w of input.waits) {
    const end = w.end;
    if (w.outcome !== "SemaphoreBusyError" || end === undefined) continue;
    const from = end - input.livenessSlack;
    if (w.requested >= from) continue; // it waited less than the slack
    if (input.freezes.some((f) => f.at < end && inCall(input, f, w.semaphore))) continue;
    const most = mostHeld(input.permits, w, from, end);
    if (most < w.permits) {
      found.push({
        property: "permit-liveness",
        detail: `permit waiter of instance ${w.instance} on ${w.semaphore} (P ${w.permits}, ${w.requested}–${end}) gave up with at most ${most} of its ${w.permits} slots held in the last ${input.livenessSlack} ms (free, or split between waiters)`,
      });
    }
  }
  return found;
}

/** The frozen instance was in a call of `semaphore` when it froze (waiting, or holding). */
function inCall(input: PermitWaitInput, freeze: Freeze, semaphore: string): boolean {
  const { instance, at } = freeze;
  const during = (start: number, stop: number | undefined) => start <= at && (stop ?? at + 1) > at;
  const mine = (p: { instance?: number | undefined; semaphore: string }) =>
    p.instance === instance && p.semaphore === semaphore;
  return (
    input.waits.some((w) => mine(w) && during(w.requested, w.end)) ||
    input.permits.some((p) => mine(p) && during(p.granted, p.releaseStart))
  );
}

/**
 * The most permits of `w`'s semaphore on slots below its P within their intervals (closed) at
 * one instant of [from, to].
 */
function mostHeld(permits: readonly PermitRecord[], w: PermitWait, from: number, to: number) {
  const marks = permits
    .filter((p) => p.semaphore === w.semaphore && p.slot < w.permits)
    .map((p) => ({ start: Math.max(p.granted, from), stop: Math.min(intervalEnd(p), to) }))
    .filter((i) => i.start <= i.stop)
    .flatMap((i) => [
      { at: i.start, step: 1 },
      { at: i.stop, step: -1 },
    ])
    // Starts before ends at one instant: closed intervals.
    .sort((a, b) => a.at - b.at || b.step - a.step);
  let count = 0;
  let most = 0;
  for (const mark of marks) {
    count += mark.step;
    most = Math.max(most, count);
  }
  return most;
}

/**
 * "permit-order" (docs/SAFETY.md §4c "Order"; the lock's 5c): a permit waiter whose registration
 * reached every node is overtaken only by calls placed before it. It is registered from
 * `REGISTERED_WITHIN` after its call (every caller of an instance registers in the room: no
 * local line) until the nodes may have dropped its record (`queuedUntil`) or it ended. A permit
 * granted to another call in that time overtook it, unless:
 * - its slot is at or above the waiter's P (the room never hands the waiter one);
 * - its call was placed before the waiter or in the same ms (places compared as the nodes
 *   compare them: the instances' `Date.now()` at the calls, offsets and all; a tie is ordered by
 *   tokens, which the observations do not tell). A call that does not wait has no place: it
 *   comes after every waiter, and is never excused by one;
 * - with the nodes' history: fewer than a majority of nodes placed its token while the waiter
 *   could take that slot there. A node hands or places a slot past a waiter only when the
 *   waiter has no record there: its token holds another slot there (a hand-off or a look
 *   deletes its record, S1; a split, or a slot it is about to pass), or its record prefers
 *   another slot (a consolidation: "later waiters served other slots while it prefers one").
 *   The waiter's tokens are those of the looks and passes carrying its place; a look's
 *   preference is taken as registered whether or not the node refused it, so both only excuse.
 *
 * A waiter whose process froze is judged until it froze (seed 20261291: a waiter frozen with its
 * streams open was handed slot 0 on two nodes, the hand-offs lapsed after `handMs`, and a
 * `tryAcquire` took the slot just before the waiter's wait would have ended).
 *
 * @example
 * bugs.push(...permitOrder(input));
 */
export function permitOrder(input: PermitWaitInput): Finding[] {
  const found: Finding[] = [];
  const { nodes } = input;
  // Built when first needed: most schedules have no candidate at all.
  let slots: SlotHistory | undefined;
  for (const w of input.waits) {
    if (w.end === undefined || w.place === undefined) continue;
    const place = w.place;
    // Until its process froze, if it did: a frozen waiter takes no hand-off (a slot handed to it
    // idles for the hand-off's TTL, then goes to the next), as `permitLiveness` does not judge it.
    const froze = input.freezes.filter((f) => f.instance === w.instance).map((f) => f.at);
    const end = Math.min(w.end, queuedUntil(w, input.nodeRates), ...froze);
    const from = w.requested + REGISTERED_WITHIN;
    let seen: ReturnType<typeof waiterOnNodes> | undefined;
    for (const g of input.permits) {
      if (g.semaphore !== w.semaphore || g.id === w.grant || g.slot >= w.permits) continue;
      if (g.granted <= from || g.granted >= end) continue;
      if (g.place !== undefined && g.place <= place) continue;
      if (nodes !== undefined) {
        slots ??= slotHistory(nodes);
        seen ??= waiterOnNodes(nodes, slots, w);
        const waiter = seen;
        // Nodes that placed it, before its grant, where the waiter had no record taking it.
        const fair = (slots.placed.get(g.token) ?? []).filter(
          (p) => p.at <= g.granted && (p.at <= from || waiter.away(p.node, p.at, g.slot)),
        );
        if (new Set(fair.map((p) => p.node)).size >= nodes.quorum) continue;
      }
      const placed = g.place === undefined ? "no place (it does not wait)" : `place ${g.place}`;
      found.push({
        property: "permit-order",
        detail: `permit waiter of instance ${w.instance} on ${w.semaphore} (P ${w.permits}, place ${place}, ${w.requested}–${end}) overtaken by ${g.id} (${placed}, slot ${g.slot}) granted at ${g.granted}`,
      });
    }
  }
  return found;
}

/** Where each token held a slot (per node) and where a script placed it anew. */
interface SlotHistory {
  readonly held: Map<string, Array<{ node: number; from: number; to: number }>>;
  readonly placed: Map<string, Array<{ node: number; at: number }>>;
}

const SLOT_KEY = /:permit:\d+$/;

function slotHistory(nodes: NodeHistory): SlotHistory {
  const byKey = new Map<string, KeyState[]>();
  const add = <T>(map: Map<string, T[]>, key: string, value: T) => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [value]);
    else list.push(value);
  };
  for (const s of nodes.states) {
    if (SLOT_KEY.test(s.key)) add(byKey, `${s.node} ${s.key}`, s);
  }
  const held: SlotHistory["held"] = new Map();
  const placed: SlotHistory["placed"] = new Map();
  for (const states of byKey.values()) {
    states.forEach((s, i) => {
      if (s.value === null) return;
      const next = states[i + 1];
      add(held, s.value, {
        node: s.node,
        from: s.at,
        to: Math.min(next?.at ?? Infinity, s.expiresAt),
      });
      const before = states[i - 1];
      // The same token with a new expiry (lengthened): placed earlier.
      if (before?.value === s.value && before.expiresAt > s.at) return;
      add(placed, s.value, { node: s.node, at: s.at });
    });
  }
  return { held, placed };
}

/**
 * The waiter as the nodes saw it: `away(node, at, slot)` when it had no record there that takes
 * `slot` at `at` (a token of its on a slot there, or a preference for another slot).
 */
function waiterOnNodes(nodes: NodeHistory, slots: SlotHistory, w: PermitWait) {
  const stem = `${nodes.prefix}${w.semaphore}`;
  const visits = (nodes.visits ?? []).filter((v) => v.stem === stem && v.place === w.place);
  const tokens = new Set(visits.map((v) => v.token));
  const held = [...tokens].flatMap((t) => slots.held.get(t) ?? []);
  return {
    away: (node: number, at: number, slot: number): boolean =>
      held.some((h) => h.node === node && h.from <= at && at <= h.to) ||
      visits.some(
        (v) =>
          v.node === node &&
          v.prefer !== undefined &&
          v.prefer.slot !== slot &&
          v.at <= at &&
          at <= v.prefer.until,
      ),
  };
}
