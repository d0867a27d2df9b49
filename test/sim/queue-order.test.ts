/**
 * The "queue-order" property (check/properties.ts 5c) counts a waiter as queued until the earliest
 * real time its caller or a majority of nodes may have stopped counting it: its wait measured on
 * its own clock, and the nodes' records on theirs (seed 20261143, schedule 2569); and first in its
 * line only once the holder of its own instance before it released (seed 20261180, schedule 2831).
 */

import { describe, expect, it } from "vitest";
import type { GrantRecord } from "../safety/harness/history";
import { checkSchedule, REGISTERED_WITHIN } from "./check/properties";
import { runSchedule } from "./run";
import type { Observations, WaitRecord } from "./workload/actor";
import type { ScheduleSpec } from "./workload/spec";

const T0 = 1_000_000;
const WAIT = 600;

/** A grant on k0 of `id` (its instance is the digit after "i"). */
const grantOf = (id: string, requested: number, granted: number, end: number): GrantRecord => ({
  id,
  source: "main",
  key: "k0",
  requested,
  granted,
  validEnd: end,
  releaseStart: end,
  fence: undefined,
  extended: 0,
  extendFailed: 0,
});

/** The properties `checkSchedule` reports for fault-free observations of these grants and waits. */
function propertiesOf(
  grants: readonly GrantRecord[],
  waits: readonly WaitRecord[],
  options: { skew: number; nodeRates?: readonly number[] | undefined },
): string[] {
  const observed: Observations = {
    grants: [...grants],
    owner: new Map(grants.map((g) => [g.id, Number(g.id.slice(1, g.id.indexOf("/")))])),
    waits: [...waits],
    jobs: [],
    idempotentRuns: [],
    idempotentAnswers: [],
    problems: [],
    permits: [],
    soloGrants: new Set(),
    resumes: new Set(),
  };
  const result = checkSchedule({
    observed,
    resource: {},
    wipes: [],
    remaining: [],
    faultFree: true,
    livenessSlack: 10_000,
    queueIdle: 100,
    skew: () => options.skew,
    nodeRates: options.nodeRates,
  });
  return result.bugs.map((b) => b.property);
}

/**
 * A waiter of instance 0 (clock rate `rate`) and a grant of instance 1 placed after it; `before`:
 * grants made before (a holder of the waiter's own instance, say).
 */
function verdict(
  granted: number,
  rate: number,
  nodeRates?: readonly number[],
  before: readonly GrantRecord[] = [],
  ahead: readonly WaitRecord[] = [],
) {
  const grant = grantOf("i1/c0#9", T0 + 300, granted, granted + 100);
  const waiter: WaitRecord = {
    ...{ instance: 0, key: "k0", listens: false, requested: T0, wait: WAIT, rate },
    ...{ outcome: "LockBusyError", end: T0 + WAIT + 5 },
  };
  return propertiesOf([...before, grant], [...ahead, waiter], { skew: 40, nodeRates });
}

describe("queue-order: how long a waiter counts as queued", () => {
  it("a grant to a later caller while the waiter waits is a finding", () => {
    expect(verdict(T0 + 500, 1)).toEqual(["queue-order"]);
    // All clocks exact: until `requested` + wait.
    expect(verdict(T0 + WAIT - 0.5, 1)).toEqual(["queue-order"]);
    expect(verdict(T0 + WAIT, 1)).toEqual([]);
  });

  it("a fast client's wait ends by its own clock: wait / rate real ms", () => {
    const rate = 1.004;
    const end = T0 + WAIT / rate; // 2.39 ms before T0 + WAIT
    expect(verdict(end - 0.1, rate)).toEqual(["queue-order"]);
    expect(verdict(end + 0.1, rate)).toEqual([]);
  });

  it("fast nodes drop the record by their clocks: the majority's slowest of them counts", () => {
    // Two of three nodes 0.4 % fast: a majority may drop the record after wait / 1.004.
    const fast = [1.004, 1.004, 0.996];
    const end = T0 + WAIT / 1.004;
    expect(verdict(end - 0.1, 1, fast)).toEqual(["queue-order"]);
    expect(verdict(end + 0.1, 1, fast)).toEqual([]);
    // One fast node is no majority: the others keep the record until the client stops.
    expect(verdict(T0 + WAIT - 0.1, 1, [1.004, 1, 0.996])).toEqual(["queue-order"]);
  });

  it("a slow client with fast nodes: whichever ends first", () => {
    // The client (0.996) waits until T0 + 602.4; a majority of nodes at 1.002 drop it at 598.8.
    const end = T0 + WAIT / 1.002;
    expect(verdict(end - 0.1, 0.996, [1.002, 1.002, 1.002])).toEqual(["queue-order"]);
    expect(verdict(end + 0.1, 0.996, [1.002, 1.002, 1.002])).toEqual([]);
  });
});

/**
 * A waiter second in its instance's line (behind a caller of the same instance called before it)
 * neither looks nor registers until that caller leaves the line: seed 20261181, where the caller
 * ahead was aborted at the end of its wait and a `wait: 0` caller of another instance took the
 * free key 2 ms later, before the waiter's first look (P1 allows it: no live waiter was recorded).
 */
describe("queue-order: a waiter behind a caller of its instance that gave up", () => {
  const W = 270;
  /** Waiter of instance 0 at T0; `ahead` of instance `aheadOf` called at `aheadAt`, ended at `aheadEnd`. */
  function behind(opts: { aheadAt: number; aheadEnd: number; aheadOf?: number; granted: number }) {
    const grant = grantOf("i1/c0#0", opts.granted, opts.granted, opts.granted + 100);
    const ahead: WaitRecord = {
      ...{ instance: opts.aheadOf ?? 0, key: "k0", listens: false, requested: opts.aheadAt },
      ...{ wait: opts.aheadEnd - opts.aheadAt, outcome: "SimAbort", end: opts.aheadEnd },
    };
    const waiter: WaitRecord = {
      ...{ instance: 0, key: "k0", listens: false, requested: T0, wait: W },
      ...{ outcome: "LockBusyError", end: T0 + W },
    };
    return propertiesOf([grant], [ahead, waiter], { skew: 0 });
  }

  it("is first, and registered, only a while after the caller ahead stopped (seed 20261181)", () => {
    // The caller ahead (called 5 ms before) aborted at T0 + 264; a caller placed after the
    // waiter took the key at T0 + 269, before the waiter's registration could reach the nodes.
    expect(behind({ aheadAt: T0 - 5, aheadEnd: T0 + 264, granted: T0 + 269 })).toEqual([]);
  });

  it("still counts an overtaking once it had time to register after the caller ahead stopped", () => {
    expect(behind({ aheadAt: T0 - 5, aheadEnd: T0 + 100, granted: T0 + 200 })).toEqual([
      "queue-order",
    ]);
  });

  it("ignores a caller called after it, or of another instance, that stopped", () => {
    expect(behind({ aheadAt: T0 + 1, aheadEnd: T0 + 264, granted: T0 + 269 })).toEqual([
      "queue-order",
    ]);
    // Called in the same ms: the line's order of a tie is not observed; the check flags.
    expect(behind({ aheadAt: T0, aheadEnd: T0 + 264, granted: T0 + 269 })).toEqual(["queue-order"]);
    expect(behind({ aheadAt: T0 - 5, aheadEnd: T0 + 264, aheadOf: 2, granted: T0 + 269 })).toEqual([
      "queue-order",
    ]);
  });
});

describe("queue-order: a waiter behind a holder of its own instance", () => {
  // Seed 20261180, schedule 2831: the waiter called while its instance held the key (granted
  // before the call), so it had no record on any node until that holder released; a caller that
  // does not queue placed on the key the hand-off freed before the waiter's first look (P1).
  const holder = grantOf("i0/c1#0", T0 - 20, T0 - 15, T0 + 400);

  it("counts as first in its line only once that holder releases", () => {
    // Granted to the other instance within REGISTERED_WITHIN of the holder's release: no finding.
    expect(verdict(T0 + 400 + REGISTERED_WITHIN, 1, undefined, [holder])).toEqual([]);
    // Later than that, the waiter was registered everywhere: the grant overtook it.
    expect(verdict(T0 + 401 + REGISTERED_WITHIN, 1, undefined, [holder])).toEqual(["queue-order"]);
  });

  it("a holder of its instance that released before the call does not delay it", () => {
    const gone = grantOf("i0/c1#0", T0 - 20, T0 - 15, T0 - 5);
    expect(verdict(T0 + 100, 1, undefined, [gone])).toEqual(["queue-order"]);
  });

  it("counts as first in its line only once an earlier waiter of its instance gave up", () => {
    // The unshrunk schedule again: a waiter ahead of it in its instance's line (not granted) kept
    // it off the nodes until that waiter's give-up.
    const base = verdict(T0 + 400 + REGISTERED_WITHIN, 1);
    expect(base).toEqual(["queue-order"]);
    expect(verdictBehindWaiter(T0 + 400 + REGISTERED_WITHIN)).toEqual([]);
    expect(verdictBehindWaiter(T0 + 401 + REGISTERED_WITHIN)).toEqual(["queue-order"]);
  });

  it("the shrunk schedule of seed 20261180: the overtaker placed before the waiter's first look", async () => {
    // Instance 1's `using` holds k0 from +100 to +156; its `multi` [0] (wait 52) calls at +115,
    // looks at +162 (waitMs 5); instance 0's `multi` [0] (wait 0) placed on n2 at +159 and on n0
    // just before the waiter's look there, and is granted at +166.
    const { verdict, trace } = await runSchedule(SEED_20261180, { trace: true });
    expect(verdict.bugs).toEqual([]);
    const grants = (trace ?? []).filter((l) => l.includes(" grant ")).map((l) => l.split(" ")[2]);
    expect(grants).toEqual(["i1/c2#0", "i1/c1#1", "i0/c0#2", "i1/c2#3"]);
  });
});

/** The waiter with an earlier waiter of its instance on k0 ahead of it that gave up at +400. */
const verdictBehindWaiter = (granted: number) =>
  verdict(
    granted,
    1,
    undefined,
    [],
    [
      {
        ...{ instance: 0, key: "k0", listens: false, requested: T0 - 10, wait: 410, rate: 1 },
        ...{ outcome: "LockBusyError", end: T0 + 400 },
      },
    ],
  );

/** Seed 20261180, schedule 2831, as shrunk by the campaign (docs/TESTING.md). */
const SEED_20261180: ScheduleSpec = {
  seed: 0,
  nodes: 3,
  weather: "calm",
  restarts: "none",
  fencing: false,
  keys: 2,
  nodeRates: [1, 1, 0.99897, 1, 1],
  instances: [
    {
      wake: false,
      rate: 1,
      callers: [
        {
          start: 99,
          ops: [
            {
              kind: "acquire",
              key: 0,
              wait: 58,
              lease: 150,
              hold: 0,
              autoExtend: false,
              end: "release",
            },
            { kind: "multi", keys: [0], wait: 0, lease: 150, hold: 0, autoExtend: false },
          ],
        },
      ],
    },
    {
      wake: false,
      rate: 1,
      callers: [
        {
          start: 115,
          ops: [{ kind: "multi", keys: [0], wait: 52, lease: 150, hold: 0, autoExtend: false }],
        },
        {
          start: 0,
          ops: [
            { kind: "onceTicket", wrapper: "once", key: 0, hold: 88 },
            { kind: "using", key: 0, wait: 0, hold: 54 },
            { kind: "using", key: 0, wait: 0, hold: 0 },
          ],
        },
        {
          start: 93,
          ops: [
            { kind: "multi", keys: [1], wait: 0, lease: 150, hold: 67, autoExtend: false },
            {
              kind: "acquire",
              key: 0,
              wait: 50,
              lease: 150,
              hold: 0,
              autoExtend: false,
              end: "release",
            },
          ],
        },
      ],
    },
  ],
};
