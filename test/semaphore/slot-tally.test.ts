/**
 * `SlotTally` over the lock's real `Tally` per slot (docs/design/semaphore.md §3 "SlotTally"):
 * the bounds a permit is decided on are the lock's (drift, the Q-th latest bound, `minValidity`,
 * the hand-off's gap), kept apart per slot. src/semaphore/tally.test.ts tests the S1 rules
 * against a stand-in; the semaphore room cannot import `Tally` past the lock's door yet.
 */
import { describe, expect, it } from "vitest";
import { Tally } from "../../src/lock/wait/tally";
import { drift } from "../../src/quorum";
import { type SlotCounter, SlotTally } from "../../src/semaphore";

const DRIFT_FACTOR = 0.01;
const MIN_VALIDITY = 10;
const TTL = 10_000;

function slotTally(order: number[], quorum: number): SlotTally {
  // Compiles only while the lock's Tally has the shape SlotTally asks of a slot's count.
  const counter = (): SlotCounter => new Tally(quorum, MIN_VALIDITY, DRIFT_FACTOR);
  return new SlotTally(order, counter);
}

const placed = (start: number) => ({ look: 1, start, ttl: TTL, fence: 0 });

describe("SlotTally with the lock's Tally per slot", () => {
  it("decides on the Q-th latest bound of the slot's own nodes (N = 5, Q = 3)", () => {
    const tally = slotTally([0, 1], 3);
    tally.placed(0, 1, placed(40));
    tally.placed(1, 1, placed(10));
    tally.placed(2, 0, placed(50)); // a later bound, but on another slot: it does not count
    expect(tally.decide(100)).toBeUndefined();
    tally.placed(3, 1, placed(20));
    tally.placed(4, 1, placed(30));
    const bound = (start: number) => start + TTL - drift(TTL, DRIFT_FACTOR);
    // Slot 1's bounds, latest first: 40, 30, 20, 10 → the third is start 20's.
    const decided = tally.decide(100);
    expect(decided).toMatchObject({ slot: 1, validUntil: bound(20), fence: 0 });
    expect([...(decided?.nodes ?? [])].sort()).toEqual([0, 1, 3, 4]);
  });

  it("needs minValidity left, as a lock does", () => {
    const tally = slotTally([0], 2);
    tally.placed(0, 0, placed(0));
    tally.placed(1, 0, placed(0));
    const validUntil = TTL - drift(TTL, DRIFT_FACTOR);
    expect(tally.decide(validUntil - MIN_VALIDITY)?.slot).toBe(0);
    expect(tally.decide(validUntil - MIN_VALIDITY + 1)).toBeUndefined();
  });

  it("counts a hand-off by its gap and hand-off TTL, on the slot its message names", () => {
    const tally = slotTally([2, 0, 1], 2);
    tally.handed(0, 0, { look: 3, start: 100, gap: 200, handMs: 1_000, fence: 0 });
    tally.placed(1, 0, { look: 3, start: 100, ttl: TTL, fence: 0 });
    const span = 1_200;
    expect(tally.decide(150)).toMatchObject({
      slot: 0,
      validUntil: 100 + span - drift(span, DRIFT_FACTOR),
    });
  });

  it("a three-way split across slots decides nothing, targets the largest and passes the rest", () => {
    const tally = slotTally([1, 2, 0], 3); // N = 5
    tally.placed(0, 0, placed(0));
    tally.placed(1, 0, placed(0));
    tally.placed(2, 1, placed(0));
    tally.placed(3, 2, placed(0));
    expect(tally.decide(10)).toBeUndefined();
    expect(tally.target(10)).toBe(0);
    const pass = tally.passFor(0, 10, false, [0, 1, 2, 3, 4]);
    expect(pass).toEqual({ keep: 0, nodes: [2, 3, 4] });
    tally.passed(2, pass?.keep);
    expect(tally.holding(10)).toEqual([0, 1]); // slot 0 kept its nodes, the others restart
    tally.handed(4, 0, { look: 2, start: 20, gap: 5, handMs: 1_000, fence: 0 });
    expect(tally.decide(30)).toMatchObject({ slot: 0, nodes: [0, 1, 4] });
  });

  it("a node moving from slot to slot is never counted twice, so two slots never both decide", () => {
    const tally = slotTally([0, 1], 2); // N = 3
    tally.placed(0, 0, placed(0));
    tally.placed(1, 0, placed(0));
    expect(tally.decide(10)?.slot).toBe(0);
    // Node 1's next look found our token on slot 1 (its slot-0 placement is gone there).
    tally.placed(1, 1, { look: 2, start: 5, ttl: TTL, fence: 0 });
    tally.placed(2, 1, { look: 2, start: 5, ttl: TTL, fence: 0 });
    expect(tally.decide(10)).toMatchObject({ slot: 1, nodes: [1, 2] });
    expect(tally.holding(10)).toEqual([0, 1, 2]);
  });
});
