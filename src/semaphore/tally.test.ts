import { describe, expect, it } from "vitest";
import { type SlotCounter, type SlotCounting, SlotTally } from "./tally";

/**
 * A stand-in for the lock's `Tally` (which this room cannot import past the lock's door): one
 * bound per node, the later one kept, no drift. test/semaphore/slot-tally.test.ts runs the real
 * one; here the point is what `SlotTally` asks of each slot's count.
 */
class Count implements SlotCounter {
  readonly counted = new Map<number, { look: number; bound: number }>();
  from = 0;
  passes: number[] = [];
  constructor(private readonly quorum: number) {}
  placed(index: number, by: { look: number; start: number; ttl: number }): void {
    this.#count(index, by.look, by.start + by.ttl);
  }
  handed(index: number, by: { look: number; start: number; gap: number; handMs: number }): void {
    this.#count(index, by.look, by.start + by.gap + by.handMs);
  }
  lost(index: number, look: number): void {
    if ((this.counted.get(index)?.look ?? look) < look) this.counted.delete(index);
  }
  passed(look: number): void {
    this.passes.push(look);
    this.from = Math.max(this.from, look);
    this.counted.clear();
  }
  holding(now: number): number[] {
    return [...this.counted].filter(([, c]) => c.bound > now).map(([index]) => index);
  }
  decide(now: number): SlotCounting | undefined {
    const live = [...this.counted].filter(([, c]) => c.bound > now);
    if (live.length < this.quorum) return undefined;
    const bounds = live.map(([, c]) => c.bound).sort((a, b) => b - a);
    return { validUntil: bounds[this.quorum - 1] as number, fence: 0, nodes: this.holding(now) };
  }
  #count(index: number, look: number, bound: number): void {
    if (look < this.from) return;
    if ((this.counted.get(index)?.bound ?? -1) < bound) this.counted.set(index, { look, bound });
  }
}

/** A SlotTally over `order` with quorum `quorum`, and each slot's count to look into. */
function setup(order: number[], quorum = 2) {
  const counts = new Map<number, Count>();
  const tally = new SlotTally(order, (slot) => {
    const count = new Count(quorum);
    counts.set(slot, count);
    return count;
  });
  const on = (slot: number) => (counts.get(slot) as Count).holding(0);
  return { tally, counts, on };
}

const look = (n: number, ttl = 1_000) => ({ look: n, start: 0, ttl, fence: 0 });
const hand = (n: number, handMs = 500) => ({ look: n, start: 0, gap: 1, handMs, fence: 0 });

describe("SlotTally: the S1 rules", () => {
  it("an answer naming slot j takes the node off every other slot", () => {
    const { tally, on } = setup([0, 1, 2]);
    tally.placed(0, 0, look(1));
    tally.placed(0, 1, look(2));
    expect([on(0), on(1), on(2)]).toEqual([[], [0], []]);
    tally.handed(0, 2, hand(3));
    expect([on(0), on(1), on(2)]).toEqual([[], [], [0]]);
    expect(tally.holding(0)).toEqual([0]);
  });

  it("a newer look's evidence wins whatever order it arrives in", () => {
    const { tally, on } = setup([0, 1]);
    tally.handed(0, 1, hand(3)); // the stream's message first
    tally.placed(0, 0, look(2)); // then a late answer of an earlier look naming another slot
    expect([on(0), on(1)]).toEqual([[], [0]]);
  });

  it("at one look, a hand-off is newer than an answer, in either order of arrival", () => {
    const first = setup([0, 1]);
    first.tally.handed(0, 1, hand(2));
    first.tally.placed(0, 0, look(2));
    expect([first.on(0), first.on(1)]).toEqual([[], [0]]);
    const second = setup([0, 1]);
    second.tally.placed(0, 0, look(2));
    second.tally.handed(0, 1, hand(2));
    expect([second.on(0), second.on(1)]).toEqual([[], [0]]);
  });

  it("two hand-offs of one look (duplicated requests): the later arrival counts, on one slot", () => {
    const { tally, on } = setup([0, 1]);
    tally.handed(0, 0, hand(2));
    tally.handed(0, 1, hand(2));
    expect([on(0), on(1)]).toEqual([[], [0]]);
  });

  it("evidence of an older look on the same slot goes to that slot's count (it merges bounds)", () => {
    const { tally, counts } = setup([0, 1]);
    tally.placed(0, 1, look(3, 1_000));
    tally.placed(0, 1, look(2, 5_000));
    expect(counts.get(1)?.counted.get(0)).toEqual({ look: 2, bound: 5_000 });
  });

  it("a refusal reaches every slot, and a hand-off naming the refused look survives it", () => {
    const { tally, on } = setup([0, 1]);
    tally.placed(0, 0, look(1));
    tally.lost(0, 2);
    expect(tally.holding(0)).toEqual([]);
    tally.handed(1, 1, hand(3));
    tally.lost(1, 3); // the answer of look 3 came after its hand-off's message
    expect(on(1)).toEqual([1]);
    tally.placed(1, 0, look(2)); // and an older look's answer does not displace it
    expect([on(0), on(1)]).toEqual([[], [1]]);
  });

  it("ignores a slot outside the call's order, leaving the node where it was", () => {
    const { tally, on } = setup([0, 1]);
    tally.placed(0, 0, look(1));
    tally.handed(0, 7, hand(2));
    expect(on(0)).toEqual([0]);
  });
});

describe("SlotTally.decide", () => {
  it("names the slot a majority holds, with that slot's count", () => {
    const { tally } = setup([2, 0, 1]);
    tally.placed(0, 0, look(1, 900));
    tally.placed(1, 0, look(1, 800));
    tally.placed(2, 1, look(1));
    expect(tally.decide(0)).toEqual({ slot: 0, validUntil: 800, fence: 0, nodes: [0, 1] });
    expect(tally.decide(850)).toBeUndefined(); // node 1's bound passed
  });

  it("never lets two slots decide at once, over any order of evidence (N = 5, Q = 3, P = 4)", () => {
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let run = 0; run < 200; run += 1) {
      const { tally, counts } = setup([3, 1, 0, 2], 3);
      for (let step = 0; step < 40; step += 1) {
        const [node, slot, n] = [next(5), next(4), 1 + next(6)];
        const kind = next(5);
        if (kind === 0) tally.lost(node, n);
        else if (kind === 1) tally.passed(n, next(2) === 0 ? slot : undefined);
        else if (kind === 2) tally.handed(node, slot, hand(n, 100 + next(900)));
        else tally.placed(node, slot, look(n, 100 + next(900)));
        const now = next(500);
        const deciding = [...counts.values()].filter((c) => c.decide(now) !== undefined);
        expect(deciding.length).toBeLessThanOrEqual(1);
        const held = [...counts.values()].flatMap((c) => [...c.counted.keys()]);
        expect(new Set(held).size).toBe(held.length); // each node on one slot at most
        expect(tally.decide(now)?.slot).toBe(
          [3, 1, 0, 2].find((s) => counts.get(s)?.decide(now) !== undefined),
        );
      }
    }
  });
});

describe("SlotTally.target", () => {
  it("is the slot with the most live nodes, ties to the earliest in the call's order", () => {
    const { tally } = setup([2, 0, 1]);
    expect(tally.target(0)).toBe(2); // nothing counted: the call's first slot
    tally.placed(0, 1, look(1));
    tally.placed(1, 0, look(1));
    expect(tally.target(0)).toBe(0); // 0 and 1 tie; 0 comes first in [2, 0, 1]
    tally.placed(2, 1, look(1));
    expect(tally.target(0)).toBe(1);
  });

  it("counts only bounds still ahead of now", () => {
    const { tally } = setup([0, 1]);
    tally.placed(0, 0, look(1, 100));
    tally.placed(1, 0, look(1, 100));
    tally.placed(2, 1, look(1, 1_000));
    expect(tally.target(50)).toBe(0);
    expect(tally.target(100)).toBe(1);
  });
});

describe("SlotTally.passed", () => {
  it("keeps the kept slot's count untouched and restarts the others from the pass", () => {
    const { tally, counts, on } = setup([0, 1, 2]);
    tally.placed(0, 1, look(2));
    tally.placed(1, 0, look(2));
    tally.passed(5, 1);
    expect(counts.get(1)?.passes).toEqual([]);
    expect([counts.get(0)?.passes, counts.get(2)?.passes]).toEqual([[5], [5]]);
    expect([on(0), on(1)]).toEqual([[], [0]]);
    tally.placed(2, 0, look(4)); // a late answer of a look before the pass: void on slot 0
    tally.placed(0, 2, look(3)); // and it does not take node 0 off the kept slot
    expect([on(0), on(1), on(2)]).toEqual([[], [0], []]);
    tally.handed(2, 0, hand(5)); // the pass's own registration, handed slot 0
    expect(on(0)).toEqual([2]);
    tally.placed(0, 2, look(6)); // a newer look found our token elsewhere: it left slot 1
    expect([on(1), on(2)]).toEqual([[], [0]]);
  });

  it("without a kept slot passes every slot", () => {
    const { tally, counts } = setup([0, 1]);
    tally.placed(0, 1, look(1));
    tally.passed(2);
    expect([...counts.values()].map((c) => c.passes)).toEqual([[2], [2]]);
    expect(tally.holding(0)).toEqual([]);
    tally.placed(0, 1, look(1));
    expect(tally.holding(0)).toEqual([]);
  });
});

describe("SlotTally.passFor", () => {
  it("passes everything to every node when a caller before us holds the target", () => {
    const { tally } = setup([0, 1]);
    tally.placed(0, 0, look(1));
    expect(tally.passFor(0, 0, true, [0, 1, 2])).toEqual({ keep: undefined, nodes: [0, 1, 2] });
  });

  it("keeps the target and passes the rest to the nodes not counted for it, in a cross-slot split", () => {
    const { tally } = setup([0, 1, 2]);
    tally.placed(0, 0, look(1));
    tally.placed(1, 1, look(1));
    tally.placed(2, 2, look(1));
    const target = tally.target(0);
    expect(target).toBe(0);
    expect(tally.passFor(target, 0, false, [0, 1, 2])).toEqual({ keep: 0, nodes: [1, 2] });
  });

  it("sends nothing when only the target is held (a split on one slot) or nothing is", () => {
    const { tally } = setup([0, 1]);
    expect(tally.passFor(0, 0, false, [0, 1, 2])).toBeUndefined();
    tally.placed(0, 0, look(1));
    tally.placed(1, 1, look(1, 10));
    expect(tally.passFor(0, 20, false, [0, 1, 2])).toBeUndefined(); // slot 1's bound passed
  });
});

describe("new SlotTally", () => {
  it("refuses an empty order or a slot listed twice", () => {
    const make = () => new Count(2);
    expect(() => new SlotTally([], make)).toThrow(RangeError);
    expect(() => new SlotTally([0, 1, 0], make)).toThrow(/each slot once/);
  });
});
