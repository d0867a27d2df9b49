/**
 * `dedupeScheduled()`'s job name and event-time configuration faults inside workerd: a name too
 * long for the key `scheduled:<name>:<cron>:<scheduledTime>` is refused when the handler is
 * wrapped, naming `name`; the longest accepted name runs; and a `ConfigurationError` raised
 * before the job runs (here a `key` longer than a lock key may be) calls `noRetry()`, since every
 * retry of the event would fail the same way, while the job's own errors keep the retry.
 */
import { createExecutionContext, createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { isConfigurationError } from "../../src";
import { dedupeScheduled } from "../../src/adapters/workers";
import { MAX_JOB_NAME_BYTES } from "../../src/adapters/workers/scheduled";
import { testLocks } from "./support/cluster";

const CRON = "*/5 * * * *";

function delivery(scheduledTime: number) {
  const controller = createScheduledController({ cron: CRON, scheduledTime });
  const noRetry = vi.spyOn(controller, "noRetry");
  return { controller, noRetry, ctx: createExecutionContext() };
}

const time = () => Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 1e6) * 300_000;

describe("dedupeScheduled: job names and configuration faults at event time", () => {
  it("refuses a name longer than MAX_JOB_NAME_BYTES at wrap time; the longest one runs", async () => {
    const { locks } = testLocks();
    const runs: string[] = [];
    const job = async () => void runs.push("ran");
    let refused: unknown;
    try {
      dedupeScheduled(job, { locks, name: "é".repeat(MAX_JOB_NAME_BYTES / 2 + 1) });
    } catch (error) {
      refused = error;
    }
    expect(isConfigurationError(refused)).toBe(true);
    expect((refused as { option: string }).option).toBe("name");
    expect((refused as Error).message).toContain(`${MAX_JOB_NAME_BYTES + 2} bytes`);

    const longest = dedupeScheduled(job, {
      locks,
      name: `a:${"j".repeat(MAX_JOB_NAME_BYTES - 2)}`,
    });
    const e = delivery(time());
    await longest(e.controller, env, e.ctx);
    expect(runs).toEqual(["ran"]);
    expect(e.noRetry).not.toHaveBeenCalled();
  });

  it("a ConfigurationError before the job runs calls noRetry() and is rethrown", async () => {
    const { locks } = testLocks();
    const runs: string[] = [];
    const scheduled = dedupeScheduled(async () => void runs.push("ran"), {
      locks,
      key: (controller) => `${"k".repeat(1_100)}:${controller.scheduledTime}`,
    });
    const e = delivery(time());
    const error = await scheduled(e.controller, env, e.ctx).catch((err: unknown) => err);
    expect(isConfigurationError(error)).toBe(true);
    expect(runs).toEqual([]);
    expect(e.noRetry).toHaveBeenCalledTimes(1);
  });

  it("a ConfigurationError the job itself throws keeps the runtime's retry", async () => {
    const { locks } = testLocks();
    const scheduled = dedupeScheduled(
      async (_c, _e, _x, lock) => {
        await lock.ticket(); // refused inside a dedupe wrapper: ConfigurationError `ticket`
      },
      { locks, name: "ticketing" },
    );
    const e = delivery(time());
    const error = await scheduled(e.controller, env, e.ctx).catch((err: unknown) => err);
    expect(isConfigurationError(error)).toBe(true);
    expect(e.noRetry).not.toHaveBeenCalled();
  });
});
