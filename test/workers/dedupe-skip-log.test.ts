/**
 * A skipped Cron Trigger is visible by default inside workerd: `dedupeScheduled` logs one
 * `console.info` line per skip naming the key and why (never a token); with `onSkip`, nothing is
 * logged and the app decides.
 */
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { dedupeScheduled, type ScheduledSkip } from "../../src/adapters/workers";
import { healAll, nodes, testLocks } from "./support/cluster";

const CRON = "0 3 * * *";

afterEach(async () => {
  vi.restoreAllMocks();
  await healAll();
});

const uniqueTime = () => Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 1e6) * 86_400_000;

async function fire(
  scheduled: ReturnType<typeof dedupeScheduled<unknown>>,
  scheduledTime: number,
): Promise<void> {
  const ctx = createExecutionContext();
  await scheduled(createScheduledController({ cron: CRON, scheduledTime }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe("dedupeScheduled in workerd: skips are visible", () => {
  it("logs one console.info line per skip with the key and reason, and no token", async () => {
    const { locks } = testLocks();
    const tokens: string[] = [];
    const scheduled = dedupeScheduled(
      async (_controller, _env, _ctx, lock) => void tokens.push(lock.token),
      { locks, name: "digest" },
    );
    const info = vi.spyOn(console, "info").mockImplementation(() => {});
    const time = uniqueTime();
    await fire(scheduled, time);
    expect(info).not.toHaveBeenCalled();
    await fire(scheduled, time);
    expect(info).toHaveBeenCalledTimes(1);
    const line = String(info.mock.calls[0]?.[0]);
    expect(line).toBe(
      `edgelock: skipped scheduled job "scheduled:digest:${CRON}:${time}": it already ran ` +
        `(its done marker stays ${line.match(/stays (\d+) s/)?.[1]} s more)`,
    );
    expect(line).not.toContain(tokens[0] as string);
    for (const node of nodes) expect(line).not.toContain(node.token);
  });

  it("with onSkip nothing is logged", async () => {
    const { locks } = testLocks();
    const skips: ScheduledSkip[] = [];
    const scheduled = dedupeScheduled(async () => {}, {
      locks,
      name: "digest",
      onSkip: (skip) => void skips.push(skip),
    });
    const info = vi.spyOn(console, "info").mockImplementation(() => {});
    const time = uniqueTime();
    await fire(scheduled, time);
    await fire(scheduled, time);
    expect(skips.map((s) => s.reason)).toEqual(["done"]);
    expect(info).not.toHaveBeenCalled();
  });
});
