/**
 * The "queue-order" property (check/properties.ts 5c) counts a waiter as queued until the earliest
 * real time its caller or a majority of nodes may have stopped counting it: its wait measured on
 * its own clock, and the nodes' records on theirs (seed 20261143, schedule 2569).
 */

import { describe, expect, it } from "vitest";
import type { GrantRecord } from "../safety/harness/history";
import { checkSchedule } from "./check/properties";
import type { Observations } from "./workload/actor";

const T0 = 1_000_000;
const WAIT = 600;

/** A waiter of instance 0 (clock rate `rate`) and a grant of instance 1 placed after it. */
function verdict(granted: number, rate: number, nodeRates?: readonly number[]) {
  const grant: GrantRecord = {
    id: "i1/c0#0",
    source: "main",
    key: "k0",
    requested: T0 + 300,
    granted,
    validEnd: granted + 100,
    fence: undefined,
    extended: 0,
    extendFailed: 0,
  };
  const observed: Observations = {
    grants: [grant],
    owner: new Map([[grant.id, 1]]),
    waits: [
      {
        ...{ instance: 0, key: "k0", listens: false, requested: T0, wait: WAIT, rate },
        ...{ outcome: "LockBusyError", end: T0 + WAIT + 5 },
      },
    ],
    jobs: [],
    idempotentRuns: [],
    idempotentAnswers: [],
    problems: [],
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
    skew: () => 40,
    nodeRates,
  });
  return result.bugs.map((b) => b.property);
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
    const grant: GrantRecord = {
      id: "i1/c0#0",
      source: "main",
      key: "k0",
      requested: opts.granted,
      granted: opts.granted,
      validEnd: opts.granted + 100,
      fence: undefined,
      extended: 0,
      extendFailed: 0,
    };
    const observed: Observations = {
      grants: [grant],
      owner: new Map([[grant.id, 1]]),
      waits: [
        {
          ...{ instance: opts.aheadOf ?? 0, key: "k0", listens: false, requested: opts.aheadAt },
          ...{ wait: opts.aheadEnd - opts.aheadAt, outcome: "SimAbort", end: opts.aheadEnd },
        },
        {
          ...{ instance: 0, key: "k0", listens: false, requested: T0, wait: W },
          ...{ outcome: "LockBusyError", end: T0 + W },
        },
      ],
      jobs: [],
      idempotentRuns: [],
      idempotentAnswers: [],
      problems: [],
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
      skew: () => 0,
    });
    return result.bugs.map((b) => b.property);
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
