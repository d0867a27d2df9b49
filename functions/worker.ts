/**
 * The Cloudflare Worker (wrangler `main`): the example app of `./app.ts` plus a Cron Trigger that
 * rebuilds the daily report at most once per scheduled time (`dedupeScheduled`), under the same
 * global lock as `POST /reports/daily/rebuild`.
 *
 * Nodes come from the secrets `EDGELOCK_NODES` (JSON `[{"url","token"}, …]`), or
 * `UPSTASH_REDIS_REST_URL` + `UPSTASH_REDIS_REST_TOKEN` for a single database.
 *
 * @module
 */
import { createLocks, type Lock, type Locks } from "../src";
import { dedupeScheduled, nodesFromEnv } from "../src/adapters/workers";
import { createApp, REPORT_KEY, rebuildDailyReport } from "./app";

/** Bindings of this Worker: `[vars]` from wrangler.toml and the secrets. */
export interface Env {
  /** Key namespace of the locks (`[vars]`). */
  readonly LOCK_PREFIX?: string;
  readonly EDGELOCK_NODES?: string;
  readonly UPSTASH_REDIS_REST_URL?: string;
  readonly UPSTASH_REDIS_REST_TOKEN?: string;
  /** Duration of the cron's simulated rebuild in ms (`[vars]`, for demos). @default 12000 */
  readonly REPORT_MS?: string | number;
  /** Duration of one simulated export in ms (`[vars]`, for demos). @default 300 */
  readonly EXPORT_MS?: string | number;
}

const REPORT_LEASE_MS = 5_000;
const REPORT_MS = 12_000;

// Secrets arrive with each invocation, but the env object is the same for every request an isolate
// serves: one lock manager per env, not one per request.
const locksByEnv = new WeakMap<Env, Locks>();

/** The lock manager of this env, built on first use. */
export function locksFor(env: Env): Locks {
  let locks = locksByEnv.get(env);
  if (locks === undefined) {
    const prefix = env.LOCK_PREFIX;
    locks = createLocks({
      nodes: nodesFromEnv(env),
      ...(prefix === undefined || prefix === "" ? {} : { prefix }),
    });
    locksByEnv.set(env, locks);
  }
  return locks;
}

const EXPORT_MS = 300;

const app = createApp((c) => locksFor(c.env as Env), {
  reportLease: REPORT_LEASE_MS,
  reportMs: REPORT_MS,
  exportMs: (c) => positiveMs((c.env as Env).EXPORT_MS, EXPORT_MS),
});

/** `value` as ms when it is a positive number, else `fallback`. */
function positiveMs(value: string | number | undefined, fallback: number): number {
  const ms = Number(value);
  return Number.isFinite(ms) && ms > 0 ? ms : fallback;
}

/** The cron's rebuild duration: `REPORT_MS` when it is a positive number, else 12 s. */
function cronReportMs(env: Env): number {
  return positiveMs(env.REPORT_MS, REPORT_MS);
}

/**
 * The Cron Trigger's job, once per scheduled time. It also takes the report lock, so a rebuild
 * started through `POST /reports/daily/rebuild` and a scheduled one never overlap; if an
 * on-demand rebuild is running at that moment, it stands in for the scheduled one (recorded as
 * done, not retried).
 */
const rebuildOnSchedule = dedupeScheduled<Env, ScheduledController, ExecutionContext | undefined>(
  async (controller, env, _ctx, run: Lock) => {
    const report = await locksFor(env).tryAcquire(REPORT_KEY, {
      lease: REPORT_LEASE_MS,
      autoExtend: true,
    });
    if (report === null) {
      console.log(`cron ${controller.cron}: a report rebuild is already running, not started`);
      return;
    }
    try {
      // Stop if either lock is lost: the run's (a duplicate could start) or the report's.
      await rebuildDailyReport(cronReportMs(env), AbortSignal.any([run.signal, report.signal]));
    } finally {
      await report.release();
    }
  },
  {
    locks: locksFor,
    // The job's name in its dedupe key: another Worker on these nodes may fire on the same cron.
    name: "daily-report",
    lease: REPORT_LEASE_MS,
    onSkip: (skip, controller) => {
      const at = new Date(controller.scheduledTime).toISOString();
      const why =
        skip.reason === "running"
          ? "another delivery of this scheduled time is running the job"
          : "this scheduled time already ran (its done marker is on the nodes)";
      console.log(`cron "${controller.cron}" @ ${at}: delivery skipped, ${why}`);
    },
  },
);

export default {
  fetch: app.fetch,

  /**
   * Cron Trigger (wrangler.toml `[triggers]`): the daily report, at most once per scheduled time.
   * Duplicate deliveries and retries of one `scheduledTime` are skipped with `noRetry()`; a failed
   * rebuild throws, so the runtime may retry it. `ctx` is optional so tests can call
   * `worker.scheduled(controller, env)`; the job does not use it.
   */
  scheduled(controller: ScheduledController, env: Env, ctx?: ExecutionContext): Promise<void> {
    return rebuildOnSchedule(controller, env, ctx);
  },
} satisfies ExportedHandler<Env>;
