/**
 * The Cloudflare Worker (wrangler `main`): the example app of `./app.ts` plus a Cron Trigger that
 * rebuilds the daily report under the same global lock as `POST /reports/daily/rebuild`.
 *
 * Nodes come from the secrets `EDGELOCK_NODES` (JSON `[{"url","token"}, …]`), or
 * `UPSTASH_REDIS_REST_URL` + `UPSTASH_REDIS_REST_TOKEN` for a single database.
 *
 * @module
 */
import { budget, createLocks, isLockBusyError, type Locks } from "../src";
import { nodesFromEnv } from "../src/adapters/workers";
import { createApp, REPORT_KEY, rebuildDailyReport } from "./app";

/** Bindings of this Worker: `[vars]` from wrangler.toml and the secrets. */
export interface Env {
  /** Key namespace of the locks (`[vars]`). */
  readonly LOCK_PREFIX?: string;
  readonly EDGELOCK_NODES?: string;
  readonly UPSTASH_REDIS_REST_URL?: string;
  readonly UPSTASH_REDIS_REST_TOKEN?: string;
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

const app = createApp((c) => locksFor(c.env as Env), {
  reportLease: REPORT_LEASE_MS,
  reportMs: REPORT_MS,
});

export default {
  fetch: app.fetch,

  // Overlap protection only: a rebuild that is still running (from the route or an earlier
  // trigger) makes this one skip. A duplicate trigger that arrives after a run finished runs
  // again; at-most-once per scheduled time is a different tool (scheduled-job dedupe).
  async scheduled(controller, env) {
    try {
      await locksFor(env).using(REPORT_KEY, (held) => rebuildDailyReport(REPORT_MS, held.signal), {
        lease: REPORT_LEASE_MS,
        budget: budget.workersScheduled(),
      });
    } catch (error) {
      if (!isLockBusyError(error)) throw error;
      console.log(`cron ${controller.cron}: report rebuild already running, skipped`);
    }
  },
} satisfies ExportedHandler<Env>;
