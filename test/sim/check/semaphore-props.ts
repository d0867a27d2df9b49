/**
 * The semaphore's properties over the permits granted in one schedule (docs/design/semaphore.md
 * §2 "Theorem 5", §5 "over-capacity", "slot-overlap"):
 *
 * - **slot-range**: a permit holds a slot j < P for the P of the semaphore instance that was
 *   granted it (Theorem 5's definitions: its looks name only those slots, the room hands it no
 *   other);
 * - **slot-overlap** (Theorem 5 a): no two permits of one slot of one semaphore have overlapping
 *   intervals — the lock's overlap property for the slot's key;
 * - **over-capacity** (Theorem 5 b): at no instant are more than P* permits of one semaphore
 *   within their intervals, P* the largest P of the permits granted for it;
 * - **one-slot-per-token** (S1, §2 "Lemma S1"), over what the nodes' keys held rather than over
 *   the permits: after every script, no node holds one token on two slots of a semaphore.
 *
 * A permit's interval is a lock grant's, `[granted, intervalEnd]` (`intervalEnd` of the safety
 * checker: its validity end, or its release call if earlier), in global virtual time, and it is
 * half-open as the lock's overlap check treats it: a permit that ends at the instant another
 * starts does not overlap it, and an interval of no length (released at its grant) holds nothing.
 *
 * Why P* is the largest P among the permits granted, not of every instance configured: permits
 * within their intervals at one instant hold distinct slots (Theorem 5 a), each below its own P,
 * so there are at most as many as the largest P among them. An instance configured with a larger
 * P that was granted nothing cannot raise the bound, so the check is the stricter one.
 *
 * @module
 */

import { intervalEnd } from "../../safety/harness/checker";
import type { GrantRecord } from "../../safety/harness/history";
import type { KeyState } from "../runtime/cluster";
import type { Finding } from "./properties";

/** One permit granted in a schedule, with its interval's ends as a lock grant records them. */
export interface PermitRecord
  extends Pick<GrantRecord, "id" | "granted" | "validEnd" | "releaseStart"> {
  /** The semaphore's name (one per key given to `semaphore()`). */
  readonly semaphore: string;
  /** The slot the permit holds. */
  readonly slot: number;
  /** The permit call's token (for the report). */
  readonly token: string;
  /** The P (`permits`) of the semaphore instance that was granted it. */
  readonly permits: number;
  /** The instance it was granted to (for the permit waiters' properties, `permit-waits.ts`). */
  readonly instance?: number | undefined;
  /** When its call was made (global ms). */
  readonly requested?: number | undefined;
  /**
   * Its place in the room: its instance's `Date.now()` at the call, which every node orders
   * waiters by; none for a call that does not wait, which comes after every waiter.
   */
  readonly place?: number | undefined;
}

/**
 * Findings of "slot-range", "slot-overlap" and "over-capacity" over `permits` (any order).
 *
 * @example
 * bugs.push(...checkPermits(observed.permits));
 */
export function checkPermits(permits: readonly PermitRecord[]): Finding[] {
  const found: Finding[] = [];
  const bySemaphore = new Map<string, PermitRecord[]>();
  for (const p of permits) {
    if (!Number.isInteger(p.slot) || p.slot < 0 || p.slot >= p.permits) {
      found.push({
        property: "slot-range",
        detail: `${p.id} of ${p.semaphore} holds slot ${p.slot}, its instance has ${p.permits} permits`,
      });
    }
    const list = bySemaphore.get(p.semaphore) ?? [];
    list.push(p);
    bySemaphore.set(p.semaphore, list);
  }
  for (const [semaphore, list] of bySemaphore) {
    const held = list
      .filter((p) => intervalEnd(p) > p.granted)
      .sort((a, b) => a.granted - b.granted || a.id.localeCompare(b.id));
    found.push(...slotOverlaps(semaphore, held), ...overCapacity(semaphore, held));
  }
  return found;
}

const end = (p: PermitRecord): number => intervalEnd(p);
const shown = (p: PermitRecord): string =>
  `${p.id} (slot ${p.slot}, token ${p.token.slice(0, 8)}, ${p.granted}–${end(p)})`;

/** Theorem 5 (a): per slot, each pair of permits whose intervals share more than an instant. */
function slotOverlaps(semaphore: string, held: readonly PermitRecord[]): Finding[] {
  const found: Finding[] = [];
  const active = new Map<number, PermitRecord[]>();
  for (const p of held) {
    const before = (active.get(p.slot) ?? []).filter((a) => end(a) > p.granted);
    for (const a of before) {
      const ms = Math.min(end(a), end(p)) - p.granted;
      found.push({
        property: "slot-overlap",
        detail: `${semaphore} slot ${p.slot}: ${shown(a)} and ${shown(p)} overlap ${ms} ms`,
      });
    }
    active.set(p.slot, [...before, p]);
  }
  return found;
}

/**
 * Theorem 5 (b), by a sweep over the intervals' ends in time order: +1 at a grant, −1 at an end,
 * ends before grants at the same instant (the lock's overlap convention). Each time the count
 * rises above P* is one finding, naming the permits within their intervals at that instant.
 */
function overCapacity(semaphore: string, held: readonly PermitRecord[]): Finding[] {
  const found: Finding[] = [];
  const most = Math.max(0, ...held.map((p) => p.permits));
  const marks = held
    .flatMap((p) => [
      { at: p.granted, step: 1, p },
      { at: end(p), step: -1, p },
    ])
    .sort((a, b) => a.at - b.at || a.step - b.step);
  const active = new Set<PermitRecord>();
  let over = false;
  for (const { at, step, p } of marks) {
    if (step < 0) active.delete(p);
    else active.add(p);
    if (active.size <= most) over = false;
    else if (!over) {
      over = true;
      const who = [...active].map(shown).join(", ");
      found.push({
        property: "over-capacity",
        detail: `${semaphore}: ${active.size} permits held at ${at} (P* ${most}): ${who}`,
      });
    }
  }
  return found;
}

/** A slot key, `<S>:permit:<j>` (`semaphoreKeys`): the semaphore's stem and the slot. */
const SLOT_KEY = /^(.*):permit:(\d+)$/;

/**
 * Findings of "one-slot-per-token" (S1) over the nodes' key states in the order the scripts ran
 * (`SimCluster.keyStates`): each time a node's slots of one semaphore hold one token twice. The
 * states one script left are recorded together, with its node and instant, so the slots are
 * compared once that script's states are all in (two scripts on one node at one instant count as
 * one). A state stands until the next one of its key on its node, or its expiry.
 *
 * @example
 * bugs.push(...oneSlotPerToken(cluster.keyStates));
 */
export function oneSlotPerToken(states: readonly KeyState[]): Finding[] {
  const found: Finding[] = [];
  /** Per node and semaphore stem: each slot's latest state. */
  const slots = new Map<string, Map<number, KeyState>>();
  const reported = new Set<string>();
  const touched = new Set<string>();
  const check = (id: string, at: number) => {
    const holders = new Map<string, number[]>();
    for (const [j, s] of slots.get(id) ?? []) {
      if (s.value === null || s.expiresAt <= at) continue;
      holders.set(s.value, [...(holders.get(s.value) ?? []), j]);
    }
    for (const [token, on] of holders) {
      if (on.length < 2 || reported.has(`${id} ${token}`)) continue;
      reported.add(`${id} ${token}`);
      const [node, stem] = id.split("\n");
      const where = on.sort((a, b) => a - b).join(", ");
      found.push({
        property: "one-slot-per-token",
        detail: `node ${node}: ${stem} holds ${token} on slots ${where} at ${at}`,
      });
    }
  };
  states.forEach((state, i) => {
    const slot = SLOT_KEY.exec(state.key);
    if (slot !== null) {
      const id = `${state.node}\n${slot[1]}`;
      const latest = slots.get(id) ?? new Map<number, KeyState>();
      latest.set(Number(slot[2]), state);
      slots.set(id, latest);
      touched.add(id);
    }
    const following = states[i + 1];
    if (following?.node === state.node && following.at === state.at) return;
    for (const id of touched) check(id, state.at);
    touched.clear();
  });
  return found;
}
