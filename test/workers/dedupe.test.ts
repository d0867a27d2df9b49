/**
 * `dedupeScheduled()` inside workerd against the dev cluster: duplicate Cron Trigger events for one
 * `scheduledTime` run the job once (concurrently and sequentially), skipped ones call `noRetry()`,
 * a failed run is retried and then runs once, and the example Worker's cron skips a finished or
 * running occurrence.
 */
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import worker from "../../functions/worker";
import {
  budget,
  createLocks,
  isConfigurationError,
  isQuorumError,
  type Lock,
  once,
} from "../../src";
import { dedupeScheduled, type ScheduledSkip } from "../../src/adapters/workers";
import {
  healAll,
  injectFault,
  nodes,
  pttlOnceGone,
  resetStats,
  sleep,
  testLocks,
  totalRequests,
} from "./support/cluster";

const N = nodes.length;
const CRON = "*/5 * * * *";

afterEach(healAll);

/** A distinct planned fire time per call (a 5-minute boundary in 2026). */
let slot = 0;
const nextTime = () => Date.UTC(2026, 0, 1) + (slot++ + Math.floor(Math.random() * 1e6)) * 300_000;

/** One Cron Trigger event as the runtime delivers it, with `noRetry()` observed. */
function delivery(scheduledTime: number, cron = CRON) {
  const controller = createScheduledController({ cron, scheduledTime });
  const noRetry = vi.spyOn(controller, "noRetry");
  return { controller, noRetry, ctx: createExecutionContext() };
}

/** A counting job and its dedupe wrapper over a fresh namespace. */
function setup(work: (lock: Lock) => Promise<void> = () => sleep(150)) {
  const { locks, events } = testLocks();
  const runs: number[] = [];
  const skips: ScheduledSkip[] = [];
  const scheduled = dedupeScheduled(
    async (controller, _env, _ctx, lock) => {
      runs.push(controller.scheduledTime);
      await work(lock);
    },
    { locks, name: "digest", onSkip: (skip) => void skips.push(skip) },
  );
  return { locks, events, runs, skips, scheduled };
}

describe("dedupeScheduled in workerd", () => {
  it("concurrent duplicates of one scheduledTime: one run, the others skip with noRetry()", async () => {
    const { runs, skips, scheduled } = setup();
    const time = nextTime();
    const events = Array.from({ length: 5 }, () => delivery(time));
    await Promise.all(events.map((e) => scheduled(e.controller, env, e.ctx)));
    expect(runs).toEqual([time]);
    expect(events.filter((e) => e.noRetry.mock.calls.length === 1)).toHaveLength(4);
    expect(skips).toHaveLength(4);
    for (const skip of skips) {
      expect(skip.key).toBe(`scheduled:digest:${CRON}:${time}`);
      expect(["running", "done"]).toContain(skip.reason);
      expect(skip.retryAfter).toBeGreaterThan(0);
    }
  });

  it("sequential duplicates: the first runs, later ones skip as done with noRetry()", async () => {
    const { runs, skips, scheduled } = setup();
    const time = nextTime();
    const events = Array.from({ length: 3 }, () => delivery(time));
    for (const e of events) {
      await scheduled(e.controller, env, e.ctx);
      await waitOnExecutionContext(e.ctx);
    }
    expect(runs).toEqual([time]);
    expect(events.map((e) => e.noRetry.mock.calls.length)).toEqual([0, 1, 1]);
    expect(skips.map((s) => s.reason)).toEqual(["done", "done"]);
    // The done marker is kept for the default retention (24 h).
    for (const skip of skips) expect(skip.retryAfter).toBeGreaterThan(23 * 3_600_000);
  });

  it("a failed run throws without noRetry(); the retry runs once, later duplicates skip", async () => {
    let attempt = 0;
    const boom = new Error("rebuild failed");
    const { runs, locks, scheduled } = setup(async () => {
      attempt += 1;
      if (attempt === 1) throw boom;
    });
    const time = nextTime();
    const first = delivery(time);
    await expect(scheduled(first.controller, env, first.ctx)).rejects.toBe(boom);
    expect(first.noRetry).not.toHaveBeenCalled();
    // No marker and no lock left: the key is free for the runtime's retry.
    expect(await pttlOnceGone(locks, `scheduled:digest:${CRON}:${time}`)).toBe(-2);

    const retry = delivery(time);
    await scheduled(retry.controller, env, retry.ctx);
    expect(retry.noRetry).not.toHaveBeenCalled();
    const late = delivery(time);
    await scheduled(late.controller, env, late.ctx);
    expect(late.noRetry).toHaveBeenCalledOnce();
    expect(runs).toEqual([time, time]);
    expect(attempt).toBe(2);
  });

  it("different scheduledTimes (and different crons) each run", async () => {
    const { runs, scheduled } = setup(async () => {});
    const times = [nextTime(), nextTime(), nextTime()];
    const events = [...times.map((t) => delivery(t)), delivery(times[0] as number, "0 3 * * *")];
    await Promise.all(events.map((e) => scheduled(e.controller, env, e.ctx)));
    expect(runs.sort()).toEqual([...times, times[0]].sort());
    for (const e of events) expect(e.noRetry).not.toHaveBeenCalled();
  });

  it("two Workers on shared nodes with the same cron each run their job once per scheduledTime", async () => {
    // One namespace (the same nodes, the same prefix), two jobs, as two Workers deployed with the
    // same `EDGELOCK_NODES` and the default prefix would have.
    const { locks } = testLocks();
    const runs: string[] = [];
    const jobOf = (name: string) =>
      dedupeScheduled(async () => void runs.push(name), { locks, name });
    const digest = jobOf("digest");
    const cleanup = jobOf("cleanup");
    const time = nextTime();
    const events = [delivery(time), delivery(time), delivery(time), delivery(time)];
    const [a, b, c, d] = events as [
      (typeof events)[0],
      (typeof events)[0],
      (typeof events)[0],
      (typeof events)[0],
    ];
    await Promise.all([digest(a.controller, env, a.ctx), cleanup(b.controller, env, b.ctx)]);
    // A true duplicate of each is still skipped.
    await digest(c.controller, env, c.ctx);
    await cleanup(d.controller, env, d.ctx);
    expect(runs.sort()).toEqual(["cleanup", "digest"]);
    expect(events.map((e) => e.noRetry.mock.calls.length)).toEqual([0, 0, 1, 1]);
  });

  it("lock.ticket() inside the job rejects with ConfigurationError `ticket`; the run is still recorded", async () => {
    let refusal: unknown;
    const { runs, locks, scheduled } = setup(async (lock) => {
      refusal = await lock.ticket().catch((e: unknown) => e);
      expect(lock.signal.aborted).toBe(false);
    });
    const time = nextTime();
    const first = delivery(time);
    await scheduled(first.controller, env, first.ctx);
    expect(isConfigurationError(refusal) && refusal.option).toBe("ticket");
    expect((await locks.inspect(`scheduled:digest:${CRON}:${time}`)).done).toBe(true);
    const duplicate = delivery(time);
    await scheduled(duplicate.controller, env, duplicate.ctx);
    expect(duplicate.noRetry).toHaveBeenCalledOnce();
    expect(runs).toEqual([time]);
  });

  it("costs 2N subrequests for a run and N for a skipped duplicate, charged to the budget", async () => {
    const { locks } = testLocks();
    const budgets: ReturnType<typeof budget.workersScheduled>[] = [];
    const scheduled = dedupeScheduled(async () => {}, {
      locks,
      name: "digest",
      budget: () => {
        const b = budget.workersScheduled({ subrequests: 1_000 });
        budgets.push(b);
        return b;
      },
    });
    const time = nextTime();
    const warm = delivery(nextTime());
    await scheduled(warm.controller, env, warm.ctx);
    await resetStats();
    const run = delivery(time);
    await scheduled(run.controller, env, run.ctx);
    expect(await totalRequests()).toBe(2 * N);
    await resetStats();
    const duplicate = delivery(time);
    await scheduled(duplicate.controller, env, duplicate.ctx);
    expect(await totalRequests()).toBe(N);
    expect(budgets.map((b) => b.spent)).toEqual([2 * N, 2 * N, N]);
  });

  it("no quorum: rethrows QuorumError without running the job or calling noRetry()", async () => {
    const { runs, scheduled } = setup();
    for (const i of [0, 1]) {
      await injectFault(i, { kind: "status", status: 500, command: "evalsha" });
      await injectFault(i, { kind: "status", status: 500, command: "eval" });
    }
    const e = delivery(nextTime());
    const error = await scheduled(e.controller, env, e.ctx).catch((err: unknown) => err);
    expect(isQuorumError(error)).toBe(true);
    expect(runs).toEqual([]);
    expect(e.noRetry).not.toHaveBeenCalled();
  });

  it("fits ExportedHandler<Env>: the handler's parameters are inferred", () => {
    type MyEnv = { readonly NAME: string };
    const { locks } = testLocks();
    const handler = {
      scheduled: dedupeScheduled(
        async (controller, env2, ctx, lock) => {
          expectTypeOf(controller).toEqualTypeOf<ScheduledController>();
          expectTypeOf(env2).toEqualTypeOf<MyEnv>();
          expectTypeOf(ctx).toEqualTypeOf<ExecutionContext>();
          expectTypeOf(lock).toEqualTypeOf<Lock>();
        },
        { locks: () => locks, key: (controller, e) => `${e.NAME}:${controller.scheduledTime}` },
      ),
    } satisfies ExportedHandler<MyEnv>;
    expect(typeof handler.scheduled).toBe("function");
  });
});

describe("functions/worker.ts cron", () => {
  /** The Worker's own namespace (wrangler.toml `LOCK_PREFIX`). */
  const workerLocks = () => createLocks({ nodes, prefix: env.LOCK_PREFIX });

  it("skips an occurrence that already ran, with noRetry(), without touching the report lock", async () => {
    const time = nextTime();
    const key = `scheduled:daily-report:0 3 * * *:${time}`;
    // Record the occurrence as done, as a finished run would have.
    expect(await once(workerLocks(), key, () => "earlier run")).toMatchObject({ status: "ran" });
    const { controller, noRetry, ctx } = delivery(time, "0 3 * * *");
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      await worker.scheduled(controller, env, ctx);
    } finally {
      log.mockRestore();
    }
    expect(noRetry).toHaveBeenCalledOnce();
    expect((await workerLocks().inspect("reports:daily")).held).toBe(false);
  });

  it("skips an occurrence another invocation is running, with noRetry()", async () => {
    const time = nextTime();
    const running = await workerLocks().acquire(`scheduled:daily-report:0 3 * * *:${time}`, {
      lease: 10_000,
    });
    const { controller, noRetry, ctx } = delivery(time, "0 3 * * *");
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      await worker.scheduled(controller, env, ctx);
    } finally {
      log.mockRestore();
      await running.release();
    }
    expect(noRetry).toHaveBeenCalledOnce();
  });
});
