/**
 * The checker on hand-made histories: it must find each kind of violation, name the grants
 * involved, tolerate exactly the measured clock error across processes, and excuse a fence
 * regression only across a wipe.
 */
import { describe, expect, it } from "vitest";
import { checkHistory, offendingGrants } from "./harness/checker";
import type { GrantRecord, History, ResourceState, Wipe } from "./harness/history";

let seq = 0;
/** A grant of `key` held over [granted, end] that released at `end` and did one section. */
function grant(
  granted: number,
  end: number,
  over: Partial<GrantRecord> & { read?: number; crashed?: boolean } = {},
): GrantRecord {
  const { read, crashed, ...rest } = over;
  const record: GrantRecord = {
    id: `g${seq++}`,
    source: "main",
    key: "k",
    requested: granted - 5,
    granted,
    validEnd: granted + 1_000,
    releaseStart: end,
    releaseStatus: "released",
    extended: 0,
    extendFailed: 0,
    ...(read === undefined
      ? {}
      : { counter: { state: "done", read, readAt: granted + 1, ackAt: end - 1 } }),
    ...rest,
  };
  if (crashed) {
    delete record.releaseStart;
    delete record.releaseStatus;
  }
  return record;
}

function history(
  grants: GrantRecord[],
  resource: Partial<ResourceState> = {},
  more: Partial<History> = {},
): History {
  const completed = grants.filter((g) => g.counter?.state === "done").length;
  const accepted = grants.filter((g) => g.fenced?.state === "done" && g.fenced.accepted).length;
  return {
    grants,
    resource: {
      k: { counter: completed, fencedCounter: accepted, lastFence: 0, ...resource },
    },
    wipes: [],
    leftovers: [],
    clockError: { main: 0 },
    ...more,
  };
}

const kinds = (h: History) => checkHistory(h).violations.map((v) => v.kind);

describe("checker: overlap", () => {
  it("back-to-back holders are fine; touching intervals are not an overlap", () => {
    const h = history([
      grant(0, 10, { read: 0 }),
      grant(10, 20, { read: 1 }),
      grant(25, 30, { read: 2 }),
    ]);
    expect(checkHistory(h).violations).toEqual([]);
  });

  it("two holders at once are reported with both ids and the overlap", () => {
    const a = grant(0, 50, { read: 0 });
    const b = grant(30, 60, { read: 1 });
    const [v] = checkHistory(history([a, b])).violations;
    expect(v).toEqual({
      kind: "overlap",
      key: "k",
      grants: [a.id, b.id],
      overlapMs: 20,
      toleranceMs: 0,
    });
  });

  it("a holder that never released is bounded by its validity, not forever", () => {
    const crashed = grant(0, 0, { crashed: true, validEnd: 900 });
    expect(kinds(history([crashed, grant(901, 950)]))).toEqual([]);
    expect(kinds(history([crashed, grant(850, 950)]))).toEqual(["overlap"]);
  });

  it("a holder whose validity ended before its release is bounded by the validity", () => {
    const a = grant(0, 5_000, { validEnd: 100 });
    expect(kinds(history([a, grant(150, 200)]))).toEqual([]);
  });

  it("different keys never conflict", () => {
    expect(kinds(history([grant(0, 50), grant(10, 60, { key: "other" })]))).toEqual([]);
  });

  it("across processes only an overlap beyond the clocks' error bound counts", () => {
    const clockError = { main: 0, p1: 1.5, p2: 1 };
    const a = grant(0, 100, { source: "p1" });
    const slight = grant(98, 150, { source: "p2" });
    expect(kinds(history([a, slight], {}, { clockError }))).toEqual([]);
    const real = grant(90, 150, { source: "p2" });
    const [v] = checkHistory(history([a, real], {}, { clockError })).violations;
    expect(v).toMatchObject({ kind: "overlap", overlapMs: 10, toleranceMs: 2.5 });
    // within one process there is no tolerance
    expect(kinds(history([a, grant(99, 150, { source: "p1" })], {}, { clockError }))).toEqual([
      "overlap",
    ]);
  });

  it("reports every overlapping pair, not only neighbours", () => {
    const [a, b, c] = [grant(0, 100), grant(10, 20), grant(30, 40)];
    const found = checkHistory(history([a, b, c] as GrantRecord[])).violations;
    expect(found.map((v) => v.grants)).toEqual([
      [a?.id, b?.id],
      [a?.id, c?.id],
    ]);
  });
});

describe("checker: lost updates", () => {
  it("a counter below the completed sections, with the same value read twice, is a lost update", () => {
    const a = grant(0, 50, { read: 0 });
    const b = grant(30, 60, { read: 0 });
    const found = checkHistory(history([a, b], { counter: 1 })).violations;
    expect(found.map((v) => v.kind)).toEqual(["overlap", "lost-update"]);
    expect(found[1]).toMatchObject({ value: 1, completed: 2, uncertain: 0, grants: [a.id, b.id] });
  });

  it("an uncertain write may or may not have landed", () => {
    const uncertain = grant(20, 30, { counter: { state: "uncertain", read: 1, why: "reset" } });
    const grants = [grant(0, 10, { read: 0 }), uncertain, grant(40, 50, { read: 1 })];
    expect(kinds(history(grants, { counter: 2 }))).toEqual([]);
    // it did land: the next section read 2
    const landed = [grant(0, 10, { read: 0 }), uncertain, grant(40, 50, { read: 2 })];
    expect(kinds(history(landed, { counter: 3 }))).toEqual([]);
    expect(kinds(history(grants, { counter: 4 }))).toEqual(["lost-update"]);
  });

  it("abandoned sections do not count", () => {
    const abandoned = grant(20, 30, { counter: { state: "abandoned", read: 1, why: "low" } });
    expect(kinds(history([grant(0, 10, { read: 0 }), abandoned], { counter: 1 }))).toEqual([]);
  });

  it("the fenced counter is checked against accepted writes only", () => {
    const ok = grant(0, 10, {
      fence: 1,
      fenced: { state: "done", read: 0, accepted: true, at: 5 },
    });
    const rejected = grant(20, 30, {
      fence: 2,
      fenced: { state: "done", read: 0, accepted: false, at: 25 },
    });
    expect(kinds(history([ok, rejected], { fencedCounter: 1 }))).toEqual([]);
    const twice = grant(20, 30, {
      fence: 2,
      fenced: { state: "done", read: 0, accepted: true, at: 25 },
    });
    expect(kinds(history([ok, twice], { fencedCounter: 1 }))).toEqual(["fenced-lost-update"]);
  });
});

describe("checker: fence order", () => {
  it("strictly increasing fences are fine; equal or lower ones are reported", () => {
    expect(kinds(history([grant(0, 10, { fence: 1 }), grant(20, 30, { fence: 2 })]))).toEqual([]);
    const a = grant(0, 10, { fence: 5 });
    const b = grant(20, 30, { fence: 5 });
    const [v] = checkHistory(history([a, b])).violations;
    expect(v).toEqual({ kind: "fence-order", key: "k", grants: [a.id, b.id], fences: [5, 5] });
    expect(kinds(history([grant(0, 10, { fence: 5 }), grant(20, 30, { fence: 3 })]))).toEqual([
      "fence-order",
    ]);
  });

  it("compares with the highest fence so far, not just the previous grant", () => {
    const grants = [
      grant(0, 10, { fence: 9 }),
      grant(20, 30, { fence: 10 }),
      grant(40, 50, { fence: 8 }),
    ];
    expect(kinds(history(grants))).toEqual(["fence-order"]);
  });

  it("a regression across a wipe is excused (and listed); one within a segment is not", () => {
    const wipe: Wipe = { node: 1, at: 15 };
    const a = grant(0, 10, { fence: 7 });
    const b = grant(20, 30, { fence: 3, requested: 16 });
    const c = grant(40, 50, { fence: 3, requested: 35 });
    const result = checkHistory(history([a, b, c], {}, { wipes: [wipe] }));
    expect(result.excusedFenceRegressions).toEqual([
      { key: "k", grants: [a.id, b.id], fences: [7, 3], wipe },
    ]);
    // c is compared with b (both after the wipe): equal fences are a violation
    expect(result.violations).toEqual([
      { kind: "fence-order", key: "k", grants: [b.id, c.id], fences: [3, 3] },
    ]);
  });

  it("a grant whose acquire began before the wipe does not bound later fences", () => {
    const wipe: Wipe = { node: 0, at: 15 };
    const straddling = grant(20, 30, { fence: 9, requested: 10 });
    const after = grant(40, 50, { fence: 4, requested: 35 });
    const result = checkHistory(history([straddling, after], {}, { wipes: [wipe] }));
    expect(result.violations).toEqual([]);
    expect(result.excusedFenceRegressions).toHaveLength(1);
  });
});

describe("checker: leftovers and stats", () => {
  it("a lock key left after the run is a violation naming the node and the last holders", () => {
    const g = grant(0, 10);
    const leftovers = [{ node: 3, key: "k", pttl: -1 }];
    const [v] = checkHistory(history([g], {}, { leftovers })).violations;
    expect(v).toEqual({ kind: "leftover", key: "k", node: 3, pttl: -1, grants: [g.id] });
  });

  it("counts sections, releases and overruns", () => {
    const overran = grant(0, 50, { validEnd: 40, read: 0 });
    const crashed = grant(100, 0, { crashed: true, read: 1 });
    const { stats } = checkHistory(history([overran, crashed]));
    expect(stats).toMatchObject({
      grants: 2,
      sectionsCompleted: 2,
      sectionsOverran: 1,
      released: 1,
      neverReleased: 1,
    });
  });

  it("offendingGrants returns the named grants and the ones around them", () => {
    const a = grant(0, 50);
    const b = grant(30, 60);
    const far = grant(500, 510);
    const h = history([a, b, far]);
    const [v] = checkHistory(h).violations;
    expect(offendingGrants(h, v as never).map((g) => g.id)).toEqual([a.id, b.id]);
  });

  it("is pure: the same history gives the same result", () => {
    const h = history([grant(0, 50, { read: 0 }), grant(30, 60, { read: 0 })], { counter: 1 });
    expect(checkHistory(h)).toEqual(checkHistory(h));
  });
});
