/**
 * The pure parts of the safety harness: seeded schedules (reproducible, a majority always up,
 * every fault kind reachable), the clock-offset math of multi-process runs, the chaos command
 * line, and the failure report (seed, replay command, offending history).
 */
import { describe, expect, it } from "vitest";
import { parseArgs, parseDuration } from "./harness/args";
import { checkHistory } from "./harness/checker";
import { combineOffsets, estimateOffset } from "./harness/clock";
import type { GrantRecord, History } from "./harness/history";
import { createRng, derive } from "./harness/random";
import { formatReport, replayCommand } from "./harness/report";
import type { RunOptions, RunReport } from "./harness/run";
import { buildSchedule, DOWN_KINDS, type FaultEvent, type Profile } from "./harness/schedule";

const options = (profile: Profile, seed = 7) => ({
  seed,
  durationMs: 30_000,
  nodes: 5,
  lease: 1_000,
  profile,
});

/** Longest stretch a down event keeps its node away (delay + start-up allowance). */
const downTo = (e: FaultEvent) =>
  e.at + (e.kind === "pause" ? (e.forMs ?? 0) : (e.delayMs ?? 0) + 1_500);

describe("seeded randomness", () => {
  it("the same seed gives the same numbers; sub-streams are independent", () => {
    const a = createRng(5);
    const b = createRng(5);
    expect(Array.from({ length: 5 }, () => a.next())).toEqual(
      Array.from({ length: 5 }, () => b.next()),
    );
    expect(derive(1, "client", 1)).not.toBe(derive(1, "client", 2));
    expect(derive(1, "client", 1)).toBe(derive(1, "client", 1));
    const rng = createRng(9);
    for (let i = 0; i < 1000; i++) {
      const v = rng.int(3, 5);
      expect(v >= 3 && v <= 5 && Number.isInteger(v)).toBe(true);
    }
  });
});

describe("fault schedule", () => {
  it("is a pure function of its options", () => {
    expect(buildSchedule(options("mixed"))).toEqual(buildSchedule(options("mixed")));
    expect(buildSchedule(options("mixed", 8))).not.toEqual(buildSchedule(options("mixed")));
  });

  it.each(["keep-data", "delayed-empty", "mixed", "unsafe"] as const)(
    "%s: at most two of five nodes are away at any moment, all within the run",
    (profile) => {
      for (const seed of [1, 2, 3, 4, 5]) {
        const events = buildSchedule(options(profile, seed));
        for (const e of events) {
          expect(e.at).toBeGreaterThanOrEqual(500);
          expect(e.at).toBeLessThan(30_000 - 1_000);
          expect(e.node).toBeGreaterThanOrEqual(0);
          expect(e.node).toBeLessThan(5);
        }
        const down = events.filter((e) => DOWN_KINDS.has(e.kind));
        for (const e of down) {
          const concurrent = new Set(
            down.filter((o) => o.at <= e.at && downTo(o) > e.at).map((o) => o.node),
          );
          expect(concurrent.size).toBeLessThanOrEqual(2);
        }
      }
    },
  );

  it("restarts match the profile: data kept, or away longer than the lease, or (unsafe) neither", () => {
    const kindsOf = (p: Profile) =>
      new Set(
        [1, 2, 3, 4, 5].flatMap((seed) => buildSchedule(options(p, seed)).map((e) => e.kind)),
      );
    expect([...kindsOf("keep-data")].filter((k) => k.startsWith("restart-empty"))).toEqual([]);
    expect(kindsOf("delayed-empty").has("restart-keep")).toBe(false);
    expect(kindsOf("mixed").has("restart-empty")).toBe(false);
    expect(kindsOf("unsafe").has("restart-empty")).toBe(true);
    for (const e of buildSchedule(options("delayed-empty"))) {
      if (e.kind === "restart-empty-delayed") expect(e.delayMs).toBeGreaterThan(1_000);
    }
  });

  it("latency spikes and pauses reach beyond the lease", () => {
    const events = [1, 2, 3].flatMap((seed) => buildSchedule(options("mixed", seed)));
    expect(events.some((e) => e.kind === "latency" && (e.ms?.[1] ?? 0) > 1_000)).toBe(true);
    expect(events.some((e) => e.kind === "pause" && (e.forMs ?? 0) > 1_000)).toBe(true);
  });
});

describe("clock offset of a child process", () => {
  it("takes the sample with the fastest round trip", () => {
    const samples = [
      { t1: 0, tc: 150, t2: 100 },
      { t1: 200, tc: 1_204, t2: 206 },
      { t1: 300, tc: 1_330, t2: 340 },
    ];
    expect(estimateOffset(samples)).toEqual({ offset: 1_001, error: 3 });
  });

  it("combines start and end estimates, covering the drift in between", () => {
    expect(combineOffsets({ offset: 10, error: 1 }, { offset: 14, error: 0.5 })).toEqual({
      offset: 12,
      error: 3,
    });
  });
});

describe("chaos command line", () => {
  it.each([
    ["90", 90_000],
    ["90s", 90_000],
    ["1500ms", 1_500],
    ["10m", 600_000],
    ["1h", 3_600_000],
  ])("duration %s = %i ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it("parses every option and rejects unknown ones", () => {
    const { run } = parseArgs([
      "--duration",
      "10m",
      "--seed=42",
      "--clients",
      "4",
      "--processes",
      "3",
    ]);
    expect(run).toMatchObject({
      durationMs: 600_000,
      seed: 42,
      clients: 4,
      processes: 3,
      profile: "mixed",
    });
    expect(parseArgs(["--profile", "unsafe", "--no-fencing"]).run).toMatchObject({
      profile: "unsafe",
      fencing: false,
    });
    expect(() => parseArgs(["--bogus"])).toThrow(/unknown option/);
    expect(() => parseArgs(["--duration", "soon"])).toThrow(/invalid duration/);
    expect(() => parseArgs(["--clients", "0"])).toThrow(/--clients/);
    expect(parseArgs(["--request-timeout", "700"]).run.requestTimeout).toBe(700);
  });
});

describe("report", () => {
  const run: RunOptions = {
    seed: 1234,
    durationMs: 20_000,
    clients: 4,
    processes: 2,
    keys: 3,
    lease: 1_000,
    profile: "unsafe",
    fencing: true,
  };

  it("a failure prints the seed, the replay command and the offending history", () => {
    const g = (id: string, granted: number, end: number, read = 0): GrantRecord => ({
      id,
      source: "p1",
      key: "k0",
      requested: granted - 3,
      granted,
      validEnd: granted + 900,
      releaseStart: end,
      releaseStatus: "released",
      extended: 0,
      extendFailed: 0,
      counter: { state: "done", read, readAt: granted + 1, ackAt: end - 1 },
    });
    const history: History = {
      grants: [
        g("p1/c0#3", 1_000, 1_050),
        g("p1/c1#7", 1_020, 1_080),
        g("p1/c2#9", 5_000, 5_010, 1),
      ],
      resource: { k0: { counter: 2, fencedCounter: 0, lastFence: 0 } },
      wipes: [{ node: 1, at: 1_010 }],
      leftovers: [],
      clockError: { main: 0, p1: 0.2 },
    };
    const report: RunReport = {
      options: run,
      schedule: [],
      injected: { "restart-empty": 1 },
      skipped: {},
      history,
      check: checkHistory(history),
      rounds: { granted: 3 },
      failures: {},
      crashes: [],
      nodeErrors: [],
      elapsedMs: 1,
      inspectHeld: 0,
    };
    const text = formatReport(report);
    expect(text).toContain("seed 1234");
    expect(text).toContain(`Replay: ${replayCommand(run)}`);
    expect(replayCommand(run)).toBe(
      "npm run chaos -- --seed 1234 --duration 20s --clients 4 --processes 2 --keys 3 --lease 1000 --profile unsafe",
    );
    expect(text).toMatch(/overlap on k0: p1\/c0#3 and p1\/c1#7/);
    expect(text).toMatch(/lost-update on k0/);
    expect(text).toContain("p1/c1#7");
    expect(text).not.toContain("p1/c2#9"); // far from the violation
    expect(text).toContain("empty restarts at: node 1");
  });
});
