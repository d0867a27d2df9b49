/**
 * The deterministic simulation in `npm test` (docs/TESTING.md "The deterministic simulation"):
 * named regression schedules, one per defect fixed and per guarantee that needs a particular
 * interleaving (`regressions.ts`), pass with the fixes and fail with each fix undone in the nodes'
 * Lua (mutants);
 * a campaign of random schedules finds no bug; the same schedule replays to the same trace.
 * Long campaigns: `npm run sim -- --schedules N [--seed S]`.
 */
import { describe, expect, it } from "vitest";
import { formatCampaign, formatFailure, runCampaign } from "./campaign";
import { mutantRun } from "./mutants";
import { REGRESSIONS, type Regression } from "./regressions";
import { runSchedule } from "./run";
import { EPOCH } from "./runtime/scheduler";

/**
 * Schedules per `npm test`; SIM_SCHEDULES / SIM_SEED override (CI uses the defaults). A smoke run
 * that keeps `npm test` within its time: the evidence is the campaigns of `npm run sim`
 * (100,000 schedules and more per change to a safety surface, docs/TESTING.md).
 */
const SCHEDULES = Number(process.env.SIM_SCHEDULES ?? 500);
const SEED = Number(process.env.SIM_SEED ?? 20_261_124);

describe("deterministic simulation", () => {
  for (const [name, regression] of Object.entries(REGRESSIONS) as [string, Regression][]) {
    it(`regression ${name}: no bug with the fix`, async () => {
      const { verdict } = await runSchedule(regression.spec);
      expect(verdict.bugs).toEqual([]);
      expect(verdict.grants + verdict.permits).toBeGreaterThan(0);
    });
    const { mutant, finds } = regression;
    if (mutant === undefined) continue;
    it(`regression ${name}: the simulation finds "${finds}" with the fix undone (${mutant})`, async () => {
      const { verdict } = await runSchedule(regression.spec, mutantRun(mutant));
      expect(verdict.bugs.map((b) => b.property)).toContain(finds);
    });
  }

  it("regression e: one run; the retry replayed, another body 422, racing retries replayed or 409", async () => {
    const { trace } = await runSchedule(REGRESSIONS["e-idempotent-retry"].spec, { trace: true });
    const lines = trace ?? [];
    expect(lines.filter((l) => l.includes("idempotent run"))).toHaveLength(1);
    const answers = lines
      .filter((l) => l.includes("idempotent answer"))
      .map((l) => l.split(" ").slice(3, 6).join(" "));
    expect(answers.filter((a) => a.startsWith("k0 body=0 ran"))).toHaveLength(1);
    expect(answers.filter((a) => a.startsWith("k0 body=1 422"))).toHaveLength(1);
    const others = answers.filter((a) => a.startsWith("k0 body=0") && !a.includes(" ran"));
    expect(others).toHaveLength(3);
    for (const a of others) expect(a).toMatch(/ (replay|409)/);
    expect(others.some((a) => a.includes("replay"))).toBe(true);
  });

  it("regression f: the sender hands on; of two deliveries of its ticket exactly one resumes", async () => {
    const { trace } = await runSchedule(REGRESSIONS["f-ticket-delivered-twice"].spec, {
      trace: true,
    });
    const grants = (trace ?? []).filter((l) => l.includes(" grant "));
    expect(grants[0]).toMatch(/grant i0\/c0#0 k0 .* release=handed-on$/);
    // Both deliveries arrive 100 ms after the hand-off; the next plain acquire starts at 400 ms.
    const start = Number(grants[0]?.split(" ")[0]);
    const resumed = grants.slice(1).filter((l) => Number(l.split(" ")[0]) < start + 400);
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatch(/ release=released$/);
  });

  it("regression g22: after the failed round, the other instance's caller gets the lock", async () => {
    const { trace } = await runSchedule(REGRESSIONS["g22-late-acquire-round"].spec, {
      trace: true,
    });
    const grants = (trace ?? []).filter((l) => l.includes(" grant "));
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatch(/grant i1\/c0#\d+ k0 .* release=released$/);
  });

  it("regression h22: the failed resume's redelivery resumes the ticket (exactly once)", async () => {
    const { trace } = await runSchedule(REGRESSIONS["h22-late-resume-round"].spec, {
      trace: true,
    });
    const grants = (trace ?? []).filter((l) => l.includes(" grant "));
    expect(grants).toHaveLength(2);
    expect(grants[0]).toMatch(/grant i0\/c0#0 k0 .* release=handed-on$/);
    expect(grants[1]).toMatch(/grant i1\/c0#1 k0 .* release=released$/);
  });

  it("regression m22: a redelivery during a slow undo is redelivered again, then resumes", async () => {
    const { trace } = await runSchedule(REGRESSIONS["m22-redelivery-during-slow-undo"].spec, {
      trace: true,
    });
    const grants = (trace ?? []).filter((l) => l.includes(" grant "));
    expect(grants).toHaveLength(2);
    expect(grants[0]).toMatch(/grant i0\/c0#0 k0 .* release=handed-on$/);
    expect(grants[1]).toMatch(/grant i1\/c0#1 k0 .* release=released$/);
  });

  /** When the grants of a trace were made (virtual ms), in order. */
  const grantTimes = (trace: readonly string[] | undefined) =>
    (trace ?? []).filter((l) => l.includes(" grant ")).map((l) => Number(l.split(" ")[0]));

  it("a head frozen with its streams open costs at most handMs + retryDelayMax of idle time", async () => {
    const { verdict, trace } = await runSchedule(REGRESSIONS["q-frozen-head"].spec, {
      trace: true,
    });
    expect(verdict.bugs).toEqual([]);
    const [first = 0, second = Number.NaN] = grantTimes(trace);
    // The holder releases 300 ms after its grant; the hand-off's TTL is the lease (1 s), the
    // refresh every retryDelayMax (200 ms); a few ms of requests on top.
    const idle = second - (first + 300);
    expect(idle).toBeGreaterThan(1_000 - 50);
    expect(idle).toBeLessThanOrEqual(1_000 + 200 + 20);
  });

  it("a killed head costs nothing: its streams closed, the release hands the key to the next", async () => {
    const { verdict, trace } = await runSchedule(REGRESSIONS["q-killed-head"].spec, {
      trace: true,
    });
    expect(verdict.bugs).toEqual([]);
    const [first = 0, second = Number.NaN] = grantTimes(trace);
    expect(second - (first + 300)).toBeLessThanOrEqual(20);
  });

  it("a hand-off heard before an older look's refusal on that node still counts (q43)", async () => {
    const { verdict, trace } = await runSchedule(REGRESSIONS["q43-handoff-before-refusal"].spec, {
      trace: true,
    });
    expect(verdict.bugs).toEqual([]);
    const grants = (trace ?? [])
      .filter((l) => l.includes(" grant "))
      .map((l) => ({ at: Number(l.split(" ")[0]) - EPOCH, id: l.split(" ")[2] ?? "" }));
    // Instance 2's caller c0 waits from 389 ms (its last call, placed first); instance 1's c1
    // calls at 782 ms. The waiter is granted, and before c1.
    const waiter = grants.find((g) => g.id.startsWith("i2/c0#") && g.at > 389);
    const later = grants.find((g) => g.id.startsWith("i1/c1#") && g.at > 782);
    expect(waiter?.at).toBeLessThan(later?.at ?? Number.POSITIVE_INFINITY);
  });

  it("replays a schedule exactly (same seed, same trace)", async () => {
    const { spec } = REGRESSIONS["c-handover-starvation"];
    const first = await runSchedule(spec, { trace: true });
    const second = await runSchedule(spec, { trace: true });
    expect(first.trace?.length).toBeGreaterThan(10);
    expect(second.trace).toEqual(first.trace);
    expect(second.events).toBe(first.events);
  });

  it(`${SCHEDULES} random schedules: no bug`, { timeout: 240_000 }, async () => {
    const report = await runCampaign({ schedules: SCHEDULES, seed: SEED });
    console.log(formatCampaign(report));
    if (report.failure !== undefined) throw new Error(formatFailure(report.failure));
    expect(report.schedules).toBe(SCHEDULES);
    expect(report.grants).toBeGreaterThan(SCHEDULES);
  });
});
