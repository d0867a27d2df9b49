/**
 * The permit waiters' properties (`check/permit-waits.ts`) on constructed histories:
 * "permit-liveness" counts only the slots below the waiter's P, against its own P, over closed
 * intervals, and skips a give-up after a freeze of an instance in a call of that semaphore;
 * "permit-order" flags a later-placed call (or one that does not wait) granted while the waiter
 * was registered, and with the nodes' history excuses placements where the waiter had no record
 * taking that slot (a token of its on another slot there, or a preference for another slot).
 * `checkSchedule` judges neither off fault-free schedules.
 */
import { describe, expect, it } from "vitest";
import { type Freeze, type PermitWait, permitLiveness, permitOrder } from "./check/permit-waits";
import { checkSchedule, type NodeHistory } from "./check/properties";
import { REGISTERED_WITHIN } from "./check/queued-until";
import type { PermitRecord } from "./check/semaphore-props";
import type { KeyState, RoomVisit } from "./runtime/cluster";
import type { Observations } from "./workload/actor";

const SLACK = 1_900;

let next = 0;
/** A permit of `s` on `slot`, held over [granted, end] (released at `end`), of instance 1. */
function permit(slot: number, granted: number, end: number, more: Partial<PermitRecord> = {}) {
  next++;
  const record: PermitRecord = {
    id: `i1/c0#p${next}`,
    instance: 1,
    semaphore: "s",
    slot,
    token: next.toString(16).padStart(32, "0"),
    permits: 2,
    granted,
    validEnd: end + 500,
    releaseStart: end,
    ...more,
  };
  return record;
}

/** A waiter of instance 0 with P 2 on `s`, called at 0 with place 1000, that gave up at `end`. */
const waiter = (end: number, more: Partial<PermitWait> = {}): PermitWait => ({
  ...{ instance: 0, semaphore: "s", permits: 2, requested: 0, wait: end, place: 1_000 },
  ...{ outcome: "SemaphoreBusyError", end },
  ...more,
});

const live = (
  permits: readonly PermitRecord[],
  waits: readonly PermitWait[],
  freezes: readonly Freeze[] = [],
) => permitLiveness({ permits, waits, livenessSlack: SLACK, freezes }).map((f) => f.property);

describe("permit-liveness", () => {
  it("a give-up with one of two slots held through the slack is flagged; both held once: not", () => {
    const w = waiter(3_000);
    expect(live([permit(0, 0, 3_000)], [w])).toEqual(["permit-liveness"]);
    // Both held at one instant of the slack (1100–3000): capacity was not idle.
    expect(live([permit(0, 0, 3_000), permit(1, 2_000, 2_010)], [w])).toEqual([]);
    // Before the slack only: idle within it.
    expect(live([permit(0, 0, 3_000), permit(1, 500, 1_000)], [w])).toEqual(["permit-liveness"]);
  });

  it("intervals are closed: a permit held no time, and one starting as another ends, count", () => {
    const w = waiter(3_000);
    expect(live([permit(0, 0, 3_000), permit(1, 2_000, 2_000)], [w])).toEqual([]);
    const touching = [permit(0, 0, 2_000), permit(0, 2_000, 3_000), permit(1, 2_000, 2_500)];
    expect(live(touching, [w])).toEqual([]);
  });

  it("only slots below the waiter's P count, whatever P the holder's instance had", () => {
    const w = waiter(3_000);
    // Slot 2 of a deploy's P = 3 leaves a P = 2 waiter's capacity idle.
    const beyond = [permit(0, 0, 3_000), permit(2, 0, 3_000, { permits: 3 })];
    expect(live(beyond, [w])).toEqual(["permit-liveness"]);
    // Slot 1 held by an instance with P = 3 holds the waiter's slot 1 all the same.
    const shared = [permit(0, 0, 3_000), permit(1, 0, 3_000, { permits: 3 })];
    expect(live(shared, [w])).toEqual([]);
    // A P = 1 waiter is held up by its one slot, and not by slot 1.
    expect(live([permit(0, 0, 3_000)], [waiter(3_000, { permits: 1 })])).toEqual([]);
    expect(live([permit(1, 0, 3_000)], [waiter(3_000, { permits: 1 })])).toEqual([
      "permit-liveness",
    ]);
  });

  it("not judged: a wait shorter than the slack, a grant, an abort, another semaphore's permits", () => {
    expect(live([], [waiter(SLACK)])).toEqual([]);
    expect(live([], [waiter(3_000, { outcome: "granted" })])).toEqual([]);
    expect(live([], [waiter(3_000, { outcome: "SimAbort" })])).toEqual([]);
    const other = [
      permit(0, 0, 3_000, { semaphore: "t" }),
      permit(1, 0, 3_000, { semaphore: "t" }),
    ];
    expect(live(other, [waiter(3_000)])).toEqual(["permit-liveness"]);
  });

  it("a freeze before the give-up skips it only when the frozen instance was in a call of it", () => {
    const w = waiter(3_000);
    const frozen = { instance: 2, at: 1_500 };
    // Instance 2 waiting for the semaphore when it froze (its wait never ends).
    const { outcome, end, ...frozenWaiter } = waiter(0, { instance: 2, requested: 1_000 });
    expect(live([], [w, frozenWaiter], [frozen])).toEqual([]);
    // Instance 2 holding a permit it had not released.
    const { releaseStart, ...held } = permit(0, 1_000, 1_700, { instance: 2 });
    expect(live([held], [w], [frozen])).toEqual([]);
    // Instance 2 idle on it (its permit released before the freeze), or the freeze after the end.
    const released = permit(0, 1_000, 1_200, { instance: 2 });
    expect(live([released], [w], [frozen])).toEqual(["permit-liveness"]);
    expect(live([held], [w], [{ instance: 2, at: 3_001 }])).toEqual(["permit-liveness"]);
    // Instance 2 waiting for another semaphore.
    const elsewhere = { ...frozenWaiter, semaphore: "t" };
    expect(live([], [w, elsewhere], [frozen])).toEqual(["permit-liveness"]);
  });
});

/** Slot 0 of `s` on `node` holding `token` from `at` (a placement) for 10 s. */
const state = (node: number, token: string, at: number, slot = 0): KeyState => ({
  node,
  key: `sim:s:permit:${slot}`,
  at,
  value: token,
  expiresAt: at + 10_000,
});

const history = (states: KeyState[], visits: RoomVisit[]): NodeHistory => ({
  ...{ states, ends: [], nodes: 3, quorum: 2, prefix: "sim:", visits },
});

const order = (
  permits: readonly PermitRecord[],
  waits: readonly PermitWait[],
  nodes?: NodeHistory,
) =>
  permitOrder({ permits, waits, livenessSlack: SLACK, freezes: [], nodes }).map((f) => f.property);

describe("permit-order", () => {
  const w = waiter(2_000, { wait: 2_000 });
  const late = (granted: number, more: Partial<PermitRecord> = {}) =>
    permit(0, granted, granted + 100, { place: 1_001, requested: 1, ...more });

  it("a call placed after the waiter, granted while it was registered, overtook it", () => {
    expect(order([late(500)], [w])).toEqual(["permit-order"]);
    // A call that does not wait has no place: after every waiter.
    expect(order([late(500, { place: undefined })], [w])).toEqual(["permit-order"]);
    // Also when the waiter was granted later.
    const granted = waiter(2_000, { wait: 2_000, outcome: "granted", grant: "mine" });
    expect(order([late(500), permit(0, 1_999, 2_100, { id: "mine" })], [granted])).toEqual([
      "permit-order",
    ]);
  });

  it("not an overtaking: placed before or in the same ms, a slot beyond P, outside the window", () => {
    expect(order([late(500, { place: 999 }), late(600, { place: 1_000 })], [w])).toEqual([]);
    expect(order([late(500, { slot: 2, permits: 3 })], [w])).toEqual([]);
    expect(order([late(REGISTERED_WITHIN)], [w])).toEqual([]);
    expect(order([late(REGISTERED_WITHIN + 1)], [w])).toEqual(["permit-order"]);
    // The nodes drop its record at its wait's end; a waiter that did not wait has no place.
    expect(order([late(2_000)], [w])).toEqual([]);
    expect(order([late(500)], [{ ...w, place: undefined }])).toEqual([]);
  });

  it("with the nodes: excused where the waiter's token held another slot, not elsewhere", () => {
    const g = late(500);
    const mine = "a".repeat(32);
    const visits: RoomVisit[] = [0, 1, 2].map((node) => ({
      ...{ node, at: 60, token: mine, stem: "sim:s", place: 1_000 },
    }));
    // g placed on nodes 0 and 1 at 495, where the waiter's token held slot 1 (a split).
    const split = [state(0, mine, 400, 1), state(1, mine, 400, 1)];
    const placed = [state(0, g.token, 495), state(1, g.token, 495)];
    expect(order([g], [w], history([...split, ...placed], visits))).toEqual([]);
    // The waiter held slot 1 on node 0 only: node 1 passed it over.
    const one = [state(0, mine, 400, 1)];
    expect(order([g], [w], history([...one, ...placed], visits))).toEqual(["permit-order"]);
    // Placed before the waiter registered on node 1, and passing it on node 0 only.
    const early = [state(0, g.token, 495), state(1, g.token, REGISTERED_WITHIN)];
    expect(order([g], [w], history(early, visits))).toEqual(["permit-order"]);
    expect(order([g], [w], history([...one, ...early], visits))).toEqual([]);
  });

  it("with the nodes: excused where the waiter preferred another slot, not the same one", () => {
    const g = late(500);
    const mine = "b".repeat(32);
    const prefer = (slot: number): RoomVisit[] =>
      [0, 1].map((node) => ({
        ...{ node, at: 300, token: mine, stem: "sim:s", place: 1_000 },
        prefer: { slot, until: 300 + 1_000 },
      }));
    const placed = [state(0, g.token, 495), state(1, g.token, 495)];
    expect(order([g], [w], history(placed, prefer(1)))).toEqual([]);
    expect(order([g], [w], history(placed, prefer(0)))).toEqual(["permit-order"]);
    // A token of another place is not the waiter's.
    const other = prefer(1).map((v) => ({ ...v, place: 1_002 }));
    expect(order([g], [w], history(placed, other))).toEqual(["permit-order"]);
  });
});

describe("checkSchedule", () => {
  const observed = (): Observations => ({
    ...{ grants: [], owner: new Map(), waits: [], jobs: [], idempotentRuns: [] },
    ...{ idempotentAnswers: [], problems: [], soloGrants: new Set(), resumes: new Set() },
    permits: [permit(0, 0, 3_000)],
    permitWaits: [waiter(3_000)],
  });
  const check = (faultFree: boolean, freezes: readonly Freeze[] | undefined) =>
    checkSchedule({
      ...{ observed: observed(), resource: {}, wipes: [], remaining: [], faultFree, freezes },
      ...{ livenessSlack: SLACK, queueIdle: 100, skew: () => 40 },
    }).bugs.map((b) => b.property);

  it("judges permit waiters on fault-free schedules without link cuts or delayed windows only", () => {
    expect(check(true, [])).toEqual(["permit-liveness"]);
    expect(check(false, [])).toEqual([]);
    expect(check(true, undefined)).toEqual([]);
  });
});
