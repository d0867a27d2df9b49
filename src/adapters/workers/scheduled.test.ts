import { describe, expect, it } from "vitest";
import { isConfigurationError } from "../../errors";
import { createLocks } from "../../lock";
import { dedupeScheduled } from "./index";

// Never contacted: wrapping validates options only.
const locks = createLocks({ nodes: [{ url: "http://127.0.0.1:9", token: "unused" }] });
const job = async () => {};

function optionOf(wrap: () => unknown): string | undefined {
  try {
    wrap();
  } catch (error) {
    if (isConfigurationError(error)) return error.option;
    throw error;
  }
  return undefined;
}

describe("dedupeScheduled (Workers) options", () => {
  it.each([
    ["handler", () => dedupeScheduled(42 as never, { locks, name: "job" })],
    ["options", () => dedupeScheduled(job, undefined as never)],
    ["locks", () => dedupeScheduled(job, { locks: "locks" as never, name: "job" })],
    ["key", () => dedupeScheduled(job, { locks, key: "k" as never })],
    ["retention", () => dedupeScheduled(job, { locks, name: "job", retention: -5 })],
    ["lease", () => dedupeScheduled(job, { locks, name: "job", lease: 0 })],
    ["budget", () => dedupeScheduled(job, { locks, name: "job", budget: {} as never })],
    ["onSkip", () => dedupeScheduled(job, { locks, name: "job", onSkip: true as never })],
    ["noRetry", () => dedupeScheduled(job, { locks, noRetry: false } as never)],
    ["name", () => dedupeScheduled(job, { locks } as never)],
    ["name", () => dedupeScheduled(job, { locks, name: " " })],
    ["name", () => dedupeScheduled(job, { locks, name: 7 as never })],
    ["name", () => dedupeScheduled(job, { locks, name: "a", key: () => "k" } as never)],
  ])("rejects a bad `%s` when wrapping", (option, wrap) => {
    expect(optionOf(wrap)).toBe(option);
  });

  it("a missing name says why the key needs it", () => {
    expect(() => dedupeScheduled(job, { locks } as never)).toThrow(/two Workers on the same cron/);
  });

  it("requires `name` or `key` in the type too", () => {
    // @ts-expect-error neither `name` nor `key`
    const untyped = () => dedupeScheduled(job, { locks });
    expect(optionOf(untyped)).toBe("name");
  });

  it("accepts a complete configuration", () => {
    expect(dedupeScheduled(job, { locks, name: "daily-digest" }).length).toBe(3);
    const scheduled = dedupeScheduled(job, {
      locks: () => locks,
      key: (controller) => `report:${controller.scheduledTime}`,
      retention: 3_600_000,
      lease: 60_000,
      budget: () => ({}) as never,
      onSkip: () => {},
    });
    expect(scheduled.length).toBe(3);
  });
});
