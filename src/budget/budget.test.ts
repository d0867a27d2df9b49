import { describe, expect, it } from "vitest";
import { isConfigurationError } from "../errors";
import { createBudget, DEFAULT_MARGIN } from "./budget";
import { budget } from "./factories";

const near = (value: number, expected: number, tolerance = 50) =>
  expect(Math.abs(value - expected)).toBeLessThanOrEqual(tolerance);

describe("budget", () => {
  it("within(): monotonic deadline, default margin and reserve, no allowance", () => {
    const b = budget.within(5_000);
    near(b.remaining(), 5_000);
    near(b.deadline - performance.now(), 5_000);
    near(b.deadlineEpoch - Date.now(), 5_000);
    expect(b.margin).toBe(DEFAULT_MARGIN);
    expect(b.reserve).toBe(0);
    expect(b.subrequests).toBeUndefined();
    expect(b.remainingSubrequests()).toBe(Number.POSITIVE_INFINITY);
  });

  it("ttl = min(lease, remaining + margin)", () => {
    const b = budget.within(2_000, { margin: 500 });
    near(b.ttl(10_000), 2_500);
    expect(b.ttl(1_000)).toBe(1_000);
    const gone = budget.within(0, { margin: 0 });
    expect(gone.ttl(1_000)).toBe(0);
    expect(budget.until(Date.now() - 10_000).ttl(1_000)).toBe(0);
  });

  it("charges subrequests against the allowance", () => {
    const b = budget.workersFetch({ subrequests: 5 });
    expect(b.subrequests).toBe(5);
    b.charge(3);
    expect(b.spent).toBe(3);
    expect(b.remainingSubrequests()).toBe(2);
    b.charge(4);
    expect(b.remainingSubrequests()).toBe(0);
  });

  it("lambda(): remaining time from the context", () => {
    const b = budget.lambda({ getRemainingTimeInMillis: () => 3_000 }, { reserve: 1_000 });
    near(b.remaining(), 3_000);
    expect(b.reserve).toBe(1_000);
  });

  it("Workers defaults: 30 s / 50 subrequests for fetch, 15 min for scheduled", () => {
    const fetch = budget.workersFetch();
    near(fetch.remaining(), 30_000);
    expect(fetch.subrequests).toBe(50);
    const scheduled = budget.workersScheduled({ subrequests: 1_000 });
    near(scheduled.remaining(), 15 * 60_000);
    expect(scheduled.subrequests).toBe(1_000);
  });

  it("until(): an epoch deadline", () => {
    near(budget.until(Date.now() + 4_000).remaining(), 4_000);
  });

  it.each([
    ["margin", () => budget.within(1_000, { margin: -1 })],
    ["reserve", () => budget.within(1_000, { reserve: Number.NaN })],
    ["subrequests", () => budget.within(1_000, { subrequests: 0 })],
    ["subrequests", () => budget.workersFetch({ subrequests: 2.5 })],
    ["ms", () => budget.within(-1)],
    ["wallMs", () => budget.workersFetch({ wallMs: Number.POSITIVE_INFINITY })],
    ["deadline", () => budget.until(Number.NaN)],
    ["context", () => budget.lambda({} as never)],
    ["remaining", () => createBudget(Number.NaN)],
    // A typo or a misplaced argument is refused, never read as "no reserve" / "no margin".
    [
      "reserv",
      () => budget.lambda({ getRemainingTimeInMillis: () => 3_000 }, { reserv: 5_000 } as never),
    ],
    ["wallMS", () => budget.workersFetch({ wallMS: 20_000 } as never)],
    ["marign", () => budget.within(5_000, { marign: 500 } as never)],
    ["wallMs", () => budget.workersScheduled({ wallMs: 1_000 } as never)],
    ["margin", () => budget.until(Date.now() + 1_000, { margin: "500" } as never)],
    ["options", () => budget.within(5_000, null as never)],
    ["options", () => budget.within(5_000, 500 as never)],
    ["options", () => budget.until(Date.now(), "soon" as never)],
    ["options", () => budget.workersFetch([] as never)],
    ["options", () => budget.workersScheduled(new Map() as never)],
    ["options", () => budget.lambda({ getRemainingTimeInMillis: () => 1 }, null as never)],
    ["ms", () => budget.within("5000" as never)],
    ["reserv", () => createBudget(1_000, { reserv: 1 } as never)],
    ["options", () => createBudget(1_000, null as never)],
    ["requests", () => budget.within(1_000).charge("2" as never)],
    ["lease", () => budget.within(1_000).ttl(Number.NaN)],
  ])("rejects a bad %s", (option, make) => {
    try {
      make();
      expect.unreachable();
    } catch (error) {
      expect(isConfigurationError(error)).toBe(true);
      expect((error as { option: string }).option).toBe(option);
      expect((error as Error).message).toContain(`\`${option}\``);
    }
  });
});
