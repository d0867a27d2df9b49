import { describe, expect, it } from "vitest";
import { Tally } from "./tally";

const QUORUM = 2;
const MIN_VALIDITY = 10;
const DRIFT_FACTOR = 0.01;
const HAND = { gap: 1, handMs: 2_000, fence: 0 };

describe("Tally.lost", () => {
  it("a refusal of look i forgets what earlier looks counted on that node", () => {
    const tally = new Tally(QUORUM, MIN_VALIDITY, DRIFT_FACTOR);
    tally.placed(0, { look: 1, start: 0, ttl: 10_000, fence: 0 });
    tally.placed(1, { look: 1, start: 0, ttl: 10_000, fence: 0 });
    expect(tally.decide(5)?.nodes).toEqual([0, 1]);
    tally.lost(1, 2); // look 2 found node 1 held by another caller: our token expired there
    expect(tally.holding(5)).toEqual([0]);
    expect(tally.decide(5)).toBeUndefined();
  });

  it("a refusal of look i that arrives after a hand-off naming look i keeps the hand-off", () => {
    // Seed 20261143, schedule 2569: node 2 ran look 4's ACQUIRE (held), then a release handed the
    // key to look 4; the message came on the stream before the ACQUIRE's answer. Forgetting the
    // hand-off left the waiter one node short of the majority it had, and its pass gave the key
    // to a caller placed after it.
    const tally = new Tally(QUORUM, MIN_VALIDITY, DRIFT_FACTOR);
    tally.handed(2, { look: 4, start: 0, ...HAND });
    tally.lost(2, 4);
    tally.handed(0, { look: 4, start: 0, ...HAND });
    expect(tally.decide(5)?.nodes).toEqual([2, 0]);
  });

  it("a refusal of a later look forgets a hand-off of an earlier one", () => {
    const tally = new Tally(QUORUM, MIN_VALIDITY, DRIFT_FACTOR);
    tally.handed(2, { look: 3, start: 0, ...HAND });
    tally.lost(2, 4);
    expect(tally.holding(5)).toEqual([]);
  });
});
