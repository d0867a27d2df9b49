/**
 * The one-shot workload's regression schedule (`j-one-shot-counter-expires`), read through its
 * trace: a ticket inside `once()` is refused and the job still runs once, two jobs on one
 * schedule both run once at the same scheduled time, and no problem is recorded.
 */
import { describe, expect, it } from "vitest";
import { REGRESSIONS } from "./regressions";
import { runSchedule } from "./run";

describe("one-shot workload", () => {
  it("regression j: the ticket is refused, the job and both scheduled jobs run once each", async () => {
    const { verdict, trace } = await runSchedule(REGRESSIONS["j-one-shot-counter-expires"].spec, {
      trace: true,
    });
    expect(verdict.bugs).toEqual([]);
    const jobs = (trace ?? []).filter((line) => / job /.test(line)).map((l) => l.split(" job ")[1]);
    expect(jobs.sort()).toEqual([
      "job0",
      "scheduled:cron0:*/5 * * * *:0",
      "scheduled:cron1:*/5 * * * *:0",
    ]);
  });
});
