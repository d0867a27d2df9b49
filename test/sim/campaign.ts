/**
 * A campaign: many random schedules through fast-check, which shrinks a failing schedule to a
 * small one and reports a seed and path that replay it. Used by `sim.test.ts` (a bounded run in
 * `npm test`) and by `npm run sim` (long runs).
 *
 * @module
 */

import fc from "fast-check";
import type { ScriptOverrides } from "./mutants";
import { type RunResult, runSchedule } from "./run";
import type { SourcePatch } from "./runtime/bundle";
import { opsOf, type ScheduleFocus, type ScheduleSpec, scheduleSpec } from "./workload/spec";

/** Totals of a campaign. */
export interface CampaignReport {
  readonly schedules: number;
  readonly ops: number;
  readonly grants: number;
  /** Permits of the semaphore workload, and the schedules that had it. */
  readonly permits: number;
  readonly semaphoreSchedules: number;
  readonly events: number;
  /** Schedules whose violations an empty restart explains (the README's hazard). */
  readonly hazards: number;
  readonly bugs: number;
  readonly seconds: number;
  /** The shrunk failing schedule and how to replay it, when a bug was found. */
  readonly failure?: {
    readonly spec: ScheduleSpec;
    readonly result: RunResult;
    readonly replay: string;
  };
}

/** Options of {@link runCampaign}. */
export interface CampaignOptions {
  readonly schedules: number;
  readonly seed: number;
  readonly overrides?: ScriptOverrides | undefined;
  /** Changes to the library's source in the client realms (client-side mutants). */
  readonly patches?: readonly SourcePatch[] | undefined;
  /** Appended to the printed replay command (e.g. the `--mutant` in use). */
  readonly replaySuffix?: string | undefined;
  /** Replay: the counterexample path a failed campaign printed (with its seed). */
  readonly path?: string | undefined;
  /** Every schedule with the semaphore workload, or fault-free (see `ScheduleFocus`). */
  readonly focus?: ScheduleFocus | undefined;
  /** Called after every schedule (progress output). */
  readonly onSchedule?: ((done: number, report: CampaignReport) => void) | undefined;
  /**
   * Called once, with the first failing schedule before shrinking starts: shrinking a large
   * schedule can take an hour, and a campaign stopped meanwhile would otherwise lose the finding.
   */
  readonly onFirstFailure?: ((spec: ScheduleSpec, result: RunResult) => void) | undefined;
}

/**
 * Run `schedules` random schedules from `seed`; stops at the first bug (then shrinks it).
 *
 * @example
 * const report = await runCampaign({ schedules: 2_000, seed: 11 });
 * if (report.failure) console.log(report.failure.replay);
 */
export async function runCampaign(options: CampaignOptions): Promise<CampaignReport> {
  const started = performance.now();
  const totals = {
    schedules: 0,
    ops: 0,
    grants: 0,
    permits: 0,
    semaphoreSchedules: 0,
    events: 0,
    hazards: 0,
    bugs: 0,
  };
  const report = (): CampaignReport => ({
    ...totals,
    seconds: (performance.now() - started) / 1_000,
  });
  let last: { spec: ScheduleSpec; result: RunResult } | undefined;
  const property = fc.asyncProperty(scheduleSpec(options.focus), async (spec) => {
    const result = await runSchedule(spec, {
      overrides: options.overrides,
      patches: options.patches,
    });
    totals.schedules++;
    totals.ops += opsOf(spec);
    totals.grants += result.verdict.grants;
    totals.permits += result.verdict.permits;
    if (spec.instances.some((i) => i.permits !== undefined)) totals.semaphoreSchedules++;
    totals.events += result.events;
    if (result.verdict.hazards.length > 0) totals.hazards++;
    options.onSchedule?.(totals.schedules, report());
    if (result.verdict.bugs.length === 0) return true;
    if (last === undefined) options.onFirstFailure?.(spec, result);
    last = { spec, result };
    return false;
  });
  const details = await fc.check(property, {
    numRuns: options.schedules,
    seed: options.seed,
    ...(options.path === undefined ? {} : { path: options.path }),
  });
  if (!details.failed || last === undefined) return report();
  totals.bugs = 1;
  // fast-check ran the shrunk counterexample last: `last` is it.
  const path = details.counterexamplePath ?? "";
  const replay = `npm run sim -- --seed ${details.seed} --path ${path}${options.replaySuffix ?? ""}`;
  return { ...report(), failure: { ...last, replay } };
}

/** A failing schedule in readable form: its spec and every bug found. */
export function formatFailure(failure: NonNullable<CampaignReport["failure"]>): string {
  const bugs = failure.result.verdict.bugs.map((b) => `  - ${b.property}: ${b.detail}`);
  return [
    `bugs in schedule (replay: ${failure.replay}):`,
    ...bugs,
    `spec: ${JSON.stringify(failure.spec)}`,
  ].join("\n");
}

/**
 * The summary lines of a campaign.
 *
 * @example
 * console.log(formatCampaign(report)); // "2000 schedules in 41.2 s (48.5 schedules/s)" …
 */
export function formatCampaign(report: CampaignReport): string {
  const rate = report.schedules / Math.max(report.seconds, 1e-9);
  return [
    `${report.schedules} schedules in ${report.seconds.toFixed(1)} s (${rate.toFixed(1)} schedules/s)`,
    `operations ${report.ops} · grants ${report.grants} · simulated events ${report.events}`,
    `semaphores: ${report.semaphoreSchedules} schedules · permits ${report.permits}`,
    `violations: ${report.bugs} bugs; ${report.hazards} schedules with the expected empty-restart hazard`,
  ].join("\n");
}
