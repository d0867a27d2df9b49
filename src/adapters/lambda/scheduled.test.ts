import type { Context, Handler, ScheduledEvent } from "aws-lambda";
import { describe, expect, expectTypeOf, it } from "vitest";
import { isConfigurationError } from "../../errors";
import type { Lock } from "../../lock";
import { createLocks } from "../../lock";
import { dedupeScheduled, type LambdaContext, type ScheduledSkipped, scheduledKey } from "./index";

// Never contacted: the cases below fail before any node request.
const locks = createLocks({ nodes: [{ url: "http://127.0.0.1:9", token: "unused" }] });
const job = async () => "ok";
const RULE = "arn:aws:events:us-east-1:123456789012:rule/daily-report";
const SCHEDULE = "arn:aws:scheduler:us-east-1:123456789012:schedule/default/nightly";
const FN = "arn:aws:lambda:us-east-1:123456789012:function:report:live";

function optionOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (isConfigurationError(error)) return error.option;
    throw error;
  }
  return undefined;
}

const context = {
  getRemainingTimeInMillis: () => 10_000,
  invokedFunctionArn: FN,
} as LambdaContext;

describe("scheduledKey", () => {
  it("EventBridge rule: rule ARN + time", () => {
    const event = {
      version: "0",
      id: "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
      "detail-type": "Scheduled Event",
      source: "aws.events",
      account: "123456789012",
      time: "2026-01-01T03:00:00Z",
      region: "us-east-1",
      resources: [RULE],
      detail: {},
    };
    expect(scheduledKey(event, FN)).toBe(`scheduled:${FN}:${RULE}:2026-01-01T03:00:00Z`);
    // Another delivery of the same occurrence (another id) has the same key.
    expect(scheduledKey({ ...event, id: "another" }, FN)).toBe(scheduledKey(event, FN));
    expect(scheduledKey({ ...event, time: "2026-01-02T03:00:00Z" }, FN)).not.toBe(
      scheduledKey(event, FN),
    );
  });

  it("Scheduler input: schedule ARN + scheduled time, never the execution id", () => {
    const attempt = (executionId: string, attemptNumber: string) => ({
      scheduleArn: SCHEDULE,
      scheduledTime: "2026-01-01T03:00:00Z",
      executionId,
      attemptNumber,
    });
    expect(scheduledKey(attempt("a", "1"), FN)).toBe(
      `scheduled:${FN}:${SCHEDULE}:2026-01-01T03:00:00Z`,
    );
    expect(scheduledKey(attempt("b", "2"), FN)).toBe(scheduledKey(attempt("a", "1"), FN));
    expect(
      scheduledKey({ "schedule-arn": SCHEDULE, "scheduled-time": "2026-01-01T03:00:00Z" }, FN),
    ).toBe(`scheduled:${FN}:${SCHEDULE}:2026-01-01T03:00:00Z`);
  });

  it("names the job: another function or target of the same rule has another key", () => {
    const event = {
      "detail-type": "Scheduled Event",
      source: "aws.events",
      time: "2026-01-01T03:00:00Z",
      resources: [RULE],
    };
    const other = "arn:aws:lambda:us-east-1:123456789012:function:audit";
    expect(scheduledKey(event, other)).not.toBe(scheduledKey(event, FN));
    expect(scheduledKey(event, `${FN}-staging`)).not.toBe(scheduledKey(event, FN));
    expect(scheduledKey(event, "")).toBeUndefined();
  });

  it.each([
    null,
    "event",
    [],
    {},
    { executionId: "x" },
    { scheduleArn: SCHEDULE },
    { scheduledTime: "2026-01-01T03:00:00Z" },
    { scheduleArn: "", scheduledTime: "2026-01-01T03:00:00Z" },
    { "detail-type": "Scheduled Event", source: "aws.events", time: "t", resources: [] },
    { "detail-type": "Scheduled Event", source: "aws.events", resources: [RULE] },
    { "detail-type": "Object Created", source: "aws.s3", time: "t", resources: [RULE] },
  ])("no key from %j", (event) => {
    expect(scheduledKey(event, FN)).toBeUndefined();
  });
});

describe("dedupeScheduled (Lambda) options", () => {
  it.each([
    ["handler", () => dedupeScheduled("nope" as never, { locks })],
    ["options", () => dedupeScheduled(job, null as never)],
    ["locks", () => dedupeScheduled(job, { locks: {} as never })],
    ["key", () => dedupeScheduled(job, { locks, key: "k" as never })],
    ["retention", () => dedupeScheduled(job, { locks, retention: 0 })],
    ["lease", () => dedupeScheduled(job, { locks, lease: 1.5 })],
    ["margin", () => dedupeScheduled(job, { locks, margin: -1 })],
    ["reserve", () => dedupeScheduled(job, { locks, reserve: Number.NaN })],
    ["wait", () => dedupeScheduled(job, { locks, wait: 100 } as never)],
  ])("rejects a bad `%s` when wrapping", (option, wrap) => {
    expect(optionOf(wrap)).toBe(option);
  });

  it("an event without a derivable key fails with ConfigurationError `key`, naming no value", async () => {
    const handler = dedupeScheduled(job, { locks });
    const error = await handler({ secret: "do-not-echo" }, context).catch((e: unknown) => e);
    expect(isConfigurationError(error) && error.option).toBe("key");
    expect(String((error as Error).message)).not.toContain("do-not-echo");
  });

  it("a context without invokedFunctionArn fails with `context` (the default key names the job)", async () => {
    const handler = dedupeScheduled(job, { locks });
    const bare = { getRemainingTimeInMillis: () => 10_000 } as LambdaContext;
    const event = { scheduleArn: SCHEDULE, scheduledTime: "2026-01-01T03:00:00Z" };
    const error = await handler(event, bare).catch((e: unknown) => e);
    expect(isConfigurationError(error) && error.option).toBe("context");
  });

  it("a context without getRemainingTimeInMillis fails with `context`", async () => {
    const handler = dedupeScheduled(job, { locks });
    const error = await handler({}, {} as LambdaContext).catch((e: unknown) => e);
    expect(isConfigurationError(error) && error.option).toBe("context");
  });

  it("returns a two-parameter async handler that fits Handler<ScheduledEvent, …>", () => {
    const handler = dedupeScheduled(
      async (event: ScheduledEvent, ctx, lock) => {
        expectTypeOf(ctx).toEqualTypeOf<LambdaContext>();
        expectTypeOf(lock).toEqualTypeOf<Lock>();
        return { at: event.time };
      },
      { locks: () => locks, retention: 3_600_000, lease: 30_000, margin: 0, reserve: 0 },
    );
    expect(handler.length).toBe(2);
    expectTypeOf(handler).toExtend<Handler<ScheduledEvent, { at: string } | ScheduledSkipped>>();
    const withContext = dedupeScheduled(async (_event: unknown, ctx: Context) => ctx.awsRequestId, {
      locks,
      key: (_event, ctx) => ctx.functionName,
    });
    expectTypeOf(withContext).toExtend<Handler<unknown, string | ScheduledSkipped>>();
  });
});
