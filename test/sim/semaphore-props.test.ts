/**
 * The semaphore's properties (`check/semaphore-props.ts`) on constructed histories: the sweep's
 * count (ends before grants at one instant, intervals of no length, release before validity end),
 * P* when instances with different P share a semaphore, several semaphores apart, one finding per
 * excursion over P*, and the sweep against a brute-force count on seeded random histories; S1
 * over the nodes' key states, constructed and from a simulated node running SEM_ACQUIRE or its
 * mutant without the "find" scan (docs/design/semaphore.md §5 "s-place-second-slot").
 */
import { describe, expect, it } from "vitest";
import { SEMAPHORE_NAMES, SEMAPHORE_SOURCES, shipLua } from "../../scripts/ship-lua";
import { scriptKeys, semaphoreKeys } from "../../src/scripts";
import { SEM_ACQUIRE } from "../../src/scripts/semaphore";
import { checkPermits, oneSlotPerToken, type PermitRecord } from "./check/semaphore-props";
import type { KeyState } from "./runtime/cluster";
import { SimCluster } from "./runtime/cluster";
import { WEATHERS } from "./runtime/fates";
import { Random } from "./runtime/random";
import { Scheduler } from "./runtime/scheduler";

let next = 0;
/** A permit of `semaphore` on `slot` held over [granted, validEnd], released at `release`. */
function permit(
  slot: number,
  granted: number,
  validEnd: number,
  more: { semaphore?: string; permits?: number; release?: number | undefined } = {},
): PermitRecord {
  next++;
  const record: PermitRecord = {
    id: `p${next}`,
    semaphore: more.semaphore ?? "s",
    slot,
    token: next.toString(16).padStart(32, "0"),
    permits: more.permits ?? 2,
    granted,
    validEnd,
  };
  return more.release === undefined ? record : { ...record, releaseStart: more.release };
}

const properties = (permits: readonly PermitRecord[]) =>
  checkPermits(permits).map((f) => f.property);

describe("over-capacity", () => {
  it("P permits held at once on distinct slots: no finding", () => {
    expect(checkPermits([permit(0, 0, 100), permit(1, 10, 90)])).toEqual([]);
  });

  it("P + 1 permits held at once: one finding naming all of them and the instant", () => {
    const a = permit(0, 0, 100);
    const b = permit(1, 10, 90);
    const c = permit(1, 50, 200);
    const found = checkPermits([a, b, c]).filter((f) => f.property === "over-capacity");
    expect(found).toHaveLength(1);
    const detail = found[0]?.detail ?? "";
    expect(detail).toMatch(/^s: 3 permits held at 50 \(P\* 2\)/);
    for (const p of [a, b, c]) expect(detail).toContain(p.id);
  });

  it("touching endpoints: a permit ending when others start is not held with them", () => {
    // At 100 the first two end (validity end; a release call) before the next two start.
    const permits = [
      permit(0, 0, 100),
      permit(1, 20, 500, { release: 100 }),
      permit(0, 100, 200),
      permit(1, 100, 300),
    ];
    expect(checkPermits(permits)).toEqual([]);
    // One millisecond later, the third permit is held at once with both earlier ones.
    const late = [permit(0, 0, 101), permit(1, 20, 500, { release: 100 }), permit(0, 100, 200)];
    expect(properties(late).sort()).toEqual(["slot-overlap"]);
    const longer = [permit(0, 0, 101), permit(1, 20, 101), permit(1, 100, 200)];
    expect(properties(longer).sort()).toEqual(["over-capacity", "slot-overlap"]);
  });

  it("the interval ends at the release call when it comes before the validity end", () => {
    const released = [permit(0, 0, 1_000, { release: 50 }), permit(1, 10, 900), permit(0, 60, 70)];
    expect(checkPermits(released)).toEqual([]);
    const held = [permit(0, 0, 1_000, { release: 80 }), permit(1, 10, 900), permit(0, 60, 70)];
    expect(properties(held).sort()).toEqual(["over-capacity", "slot-overlap"]);
  });

  it("an interval of no length (released at its grant, or valid no longer) holds nothing", () => {
    const permits = [
      permit(0, 0, 100),
      permit(1, 0, 100),
      permit(0, 50, 50),
      permit(1, 60, 200, { release: 60 }),
      permit(0, 70, 40),
    ];
    expect(checkPermits(permits)).toEqual([]);
  });

  it("P* is the largest P granted for the semaphore: 3 and 5 sharing slots hold 5 at most", () => {
    const five = [0, 1, 2].map((j) => permit(j, j, 100, { permits: 3 }));
    five.push(permit(3, 5, 100, { permits: 5 }), permit(4, 6, 100, { permits: 5 }));
    expect(checkPermits(five)).toEqual([]);
    const six = [...five, permit(2, 7, 100, { permits: 3 })];
    const found = checkPermits(six);
    expect(found.map((f) => f.property).sort()).toEqual(["over-capacity", "slot-overlap"]);
    expect(found.find((f) => f.property === "over-capacity")?.detail).toMatch(
      /6 permits held at 7 \(P\* 5\)/,
    );
  });

  it("P* is per semaphore: instances with P = 3 elsewhere do not raise another's bound", () => {
    const permits = [
      permit(0, 0, 100, { semaphore: "a", permits: 3 }),
      permit(1, 0, 100, { semaphore: "a", permits: 3 }),
      permit(2, 0, 100, { semaphore: "a", permits: 3 }),
      permit(0, 0, 100, { semaphore: "b", permits: 2 }),
      permit(1, 0, 100, { semaphore: "b", permits: 2 }),
    ];
    expect(checkPermits(permits)).toEqual([]);
    // A third permit of b on a slot of its own P would be out of range; on slot 1 it overlaps.
    const found = checkPermits([...permits, permit(1, 10, 20, { semaphore: "b", permits: 2 })]);
    expect(found.map((f) => f.detail.split(":")[0])).toEqual(["b slot 1", "b"]);
  });

  it("several semaphores with the same slot numbers: counted apart, never together", () => {
    const permits = ["a", "b", "c"].flatMap((semaphore) => [
      permit(0, 0, 100, { semaphore }),
      permit(1, 0, 100, { semaphore }),
    ]);
    expect(checkPermits(permits)).toEqual([]);
  });

  it("one finding per excursion above P*, however far above it goes", () => {
    const permits = [
      permit(0, 0, 100, { permits: 1 }),
      permit(0, 10, 100, { permits: 1 }),
      permit(0, 20, 100, { permits: 1 }),
      permit(0, 200, 300, { permits: 1 }),
      permit(0, 250, 260, { permits: 1 }),
    ];
    const found = checkPermits(permits).filter((f) => f.property === "over-capacity");
    expect(found.map((f) => f.detail.split(" (")[0])).toEqual([
      "s: 2 permits held at 10",
      "s: 2 permits held at 250",
    ]);
  });

  it("the order of the records does not matter", () => {
    const permits = [permit(0, 0, 100), permit(1, 10, 90), permit(1, 50, 200), permit(0, 95, 99)];
    const reversed = checkPermits([...permits].reverse());
    expect(reversed).toEqual(checkPermits(permits));
  });
});

describe("slot-overlap and slot-range", () => {
  it("two permits of one slot overlapping: a finding naming the slot, both and the overlap", () => {
    const a = permit(0, 0, 100, { permits: 3 });
    const b = permit(0, 40, 300, { permits: 3 });
    const found = checkPermits([a, b]);
    expect(found).toEqual([
      {
        property: "slot-overlap",
        detail: expect.stringMatching(/^s slot 0: p\d+ .* and p\d+ .* overlap 60 ms$/),
      },
    ]);
  });

  it("a slot the permit's own P does not have is out of range", () => {
    const found = checkPermits([permit(2, 0, 100, { permits: 2 }), permit(-1, 0, 100)]);
    expect(found.map((f) => f.property)).toEqual(["slot-range", "slot-range"]);
  });
});

describe("the sweep against a brute-force count", () => {
  it("finds over-capacity exactly when some grant instant has more than P* permits held", () => {
    const random = new Random(20261201);
    let over = 0;
    for (let run = 0; run < 400; run++) {
      const permits = Array.from({ length: random.int(1, 12) }, () => {
        const granted = random.int(0, 50);
        const length = random.int(-5, 40);
        const release = random.chance(0.3) ? granted + random.int(0, 30) : undefined;
        return permit(random.int(0, 2), granted, granted + length, { permits: 3, release });
      });
      const ends = permits.map((p) => Math.min(p.validEnd, p.releaseStart ?? Infinity));
      const heldAt = (t: number) =>
        permits.filter((p, i) => p.granted <= t && t < (ends[i] as number)).length;
      const brute = permits.some((p) => heldAt(p.granted) > 3);
      const found = properties(permits).includes("over-capacity");
      expect(found, JSON.stringify(permits)).toBe(brute);
      if (brute) over++;
    }
    // The histories tested both outcomes.
    expect(over).toBeGreaterThan(20);
    expect(over).toBeLessThan(380);
  });
});

const T = "f".repeat(32);
/** Slot j of semaphore `s` on `node` holds `value` from `at` (until 1 000, or `expiresAt`). */
const state = (node: number, j: number, at: number, value: string | null, more = {}): KeyState => ({
  node,
  key: `lock:s:permit:${j}`,
  at,
  value,
  expiresAt: 1_000,
  ...more,
});

describe("one-slot-per-token", () => {
  it("a node holding one token on two slots: one finding, whichever slot came first", () => {
    const found = oneSlotPerToken([state(0, 1, 10, T), state(0, 0, 20, T), state(0, 0, 30, T)]);
    expect(found).toEqual([
      { property: "one-slot-per-token", detail: `node 0: lock:s holds ${T} on slots 0, 1 at 20` },
    ]);
  });

  it("a token gone from its slot (deleted, or expired by then) is on one slot again", () => {
    expect(
      oneSlotPerToken([state(0, 0, 10, T), state(0, 0, 15, null), state(0, 1, 20, T)]),
    ).toEqual([]);
    const expired = state(0, 0, 10, T, { expiresAt: 20 });
    expect(oneSlotPerToken([expired, state(0, 1, 20, T)])).toEqual([]);
    const later = state(0, 0, 10, T, { expiresAt: 21 });
    expect(oneSlotPerToken([later, state(0, 1, 20, T)])).toHaveLength(1);
  });

  it("one token on different nodes, or on slots of two semaphores, is no finding", () => {
    const other = { ...state(0, 1, 20, T), key: "lock:t:permit:1" };
    expect(oneSlotPerToken([state(0, 0, 10, T), state(1, 1, 10, T), other])).toEqual([]);
  });

  it("compares the slots once a script's states are all in, not between two of them", () => {
    // One script at 30 on node 0 moving the token from slot 0 to slot 1 (none of ours does).
    const states = [state(0, 0, 10, T), state(0, 1, 30, T), state(0, 0, 30, null)];
    expect(oneSlotPerToken(states)).toEqual([]);
    // The same changes by two scripts at different instants: the token was on both in between.
    const apart = [state(0, 0, 10, T), state(0, 1, 30, T), state(0, 0, 31, null)];
    expect(oneSlotPerToken(apart)).toHaveLength(1);
  });

  /** A re-sent SEM_ACQUIRE of T over slots 0, 1 on one simulated node running `lua`. */
  function resend(lua?: string): KeyState[] {
    const overrides = new Map(lua === undefined ? [] : [[SEM_ACQUIRE.sha1, lua]]);
    const exact = { rate: 1, offsetMs: 0 };
    const cluster = new SimCluster(
      new Scheduler(),
      new Random(1),
      [exact],
      WEATHERS.calm,
      overrides,
    );
    const keys = semaphoreKeys("lock:", "s", 2);
    const args = SEM_ACQUIRE.args({ token: T, ttl: 5_000, slots: [0, 1], eligible: 2 });
    for (let i = 0; i < 2; i++) {
      cluster.eval(0, SEM_ACQUIRE.lua, scriptKeys(keys.slots, keys.tombstone(T)), args);
    }
    return cluster.keyStates;
  }

  it("finds the mutant that places without scanning for its token, on the cluster's states", () => {
    const source = SEMAPHORE_SOURCES.SEM_ACQUIRE_LUA as string;
    expect(shipLua(source, SEMAPHORE_NAMES)).toBe(SEM_ACQUIRE.lua);
    const find = 'if redis.call("GET", lockKey(i)) == token then\n    lengthen(';
    expect(source).toContain(find);
    const mutant = shipLua(source.replace(find, "if false then\n    lengthen("), SEMAPHORE_NAMES);
    expect(oneSlotPerToken(resend())).toEqual([]);
    expect(oneSlotPerToken(resend(mutant)).map((f) => f.detail)).toEqual([
      `node 0: lock:s holds ${T} on slots 0, 1 at ${new Scheduler().now}`,
    ]);
  });
});
