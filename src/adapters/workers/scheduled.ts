import { budget as budgets } from "../../budget";
import { checkRetention, logSkip, once } from "../../dedupe";
import {
  ConfigurationError,
  checkFunction,
  checkOptionsWithLocks,
  isConfigurationError,
  optionalMs,
} from "../../errors";
import type { Lock } from "../../lock";
import { checkLeaseWith, checkLocksOption } from "../../lock";
import type {
  DedupedScheduledHandler,
  DedupeScheduledOptions,
  ScheduledControllerLike,
  ScheduledHandler,
} from "./scheduled-types";

const KNOWN = new Set(["locks", "name", "key", "retention", "lease", "budget", "onSkip"]);

/**
 * Run a Cloudflare Cron Trigger at most once per scheduled time. Cron events are delivered at
 * least once (and a failed run may be retried); each event goes through `once()` under the key
 * `scheduled:${name}:${cron}:${scheduledTime}` (`name` names the job, `scheduledTime` is the
 * planned time, the same for every duplicate and retry):
 * - first event: takes the lock (auto-extended), runs `handler(controller, env, ctx, lock)`, and
 *   on success leaves a done marker for `retention` ms;
 * - a duplicate while it runs, or after it finished: skipped: `controller.noRetry()`, then
 *   `onSkip` (without one, a `console.info` line naming the key and why), and the event ends
 *   normally;
 * - `handler` throws: the lock is released (no marker) and the error rethrown, so the runtime's
 *   retry can run the job; lock failures (`QuorumError`, `BudgetExhaustedError`) are rethrown
 *   too, without running `handler`;
 * - a `ConfigurationError` before `handler` runs (from `locks(env)`, `key` or `budget`, or a key
 *   that `once()` refuses): `controller.noRetry()`, then rethrown — every retry would fail alike.
 * The release or the done marker is awaited on every node (each answered or its request timed
 * out) before the returned promise settles, so the event does not end with a request in flight.
 * A run whose marker could not be written on a majority of nodes still ends normally; the
 * manager's `onEvent` reports it (`{ type: "complete", result: "unrecorded" }`), and a later
 * duplicate may run again.
 *
 * `name` is required (unless `key` is given): Workers that share the nodes and the prefix and fire
 * on the same cron would otherwise share their keys, and each scheduled time would run only one
 * of their jobs.
 *
 * Defaults: `key` as above, `retention` 24 h, `lease` from `createLocks`, `budget`
 * `budget.workersScheduled()` (15 min of wall time, 50 subrequests). Uncontended cost: 2N
 * subrequests (acquire + done marker); a skipped duplicate costs N.
 *
 * @param handler `(controller, env, ctx, lock) => Promise<void>`
 * @param options see {@link DedupeScheduledOptions}
 * @returns `(controller, env, ctx) => Promise<void>`, an `ExportedHandlerScheduledHandler<Env>`
 * @throws {ConfigurationError} at wrap time, naming the invalid option (`name` when neither `name`
 *   nor `key` is given, or both, or longer than {@link MAX_JOB_NAME_BYTES} bytes)
 * @example
 * import { createLocks } from "edgelock";
 * import { dedupeScheduled, nodesFromEnv } from "edgelock/workers";
 *
 * export default {
 *   scheduled: dedupeScheduled(
 *     async (controller, env, ctx, lock) => {
 *       await sendDailyDigest(env, { signal: lock.signal });
 *     },
 *     { name: "daily-digest", locks: (env) => createLocks({ nodes: nodesFromEnv(env) }), lease: 60_000 },
 *   ),
 * } satisfies ExportedHandler<Env>;
 */
export function dedupeScheduled<
  Env,
  Controller extends ScheduledControllerLike = ScheduledControllerLike,
  Ctx = unknown,
>(
  handler: DedupedScheduledHandler<Env, Controller, Ctx>,
  options: DedupeScheduledOptions<Env, NoInfer<Controller>>,
): ScheduledHandler<Env, Controller, Ctx> {
  checkFunction("handler", handler);
  checkOptionsWithLocks(options, KNOWN, "dedupeScheduled");
  const { locks, name, key, budget, onSkip } = options;
  checkLocksOption(locks);
  if (key !== undefined) checkFunction("key", key);
  checkJobName(name, key !== undefined);
  if (budget !== undefined) checkFunction("budget", budget);
  if (onSkip !== undefined) checkFunction("onSkip", onSkip);
  const retention = checkRetention(options.retention);
  const lease = optionalMs("lease", options.lease, 1);
  checkLeaseWith(locks, lease);

  return async function dedupedScheduled(controller: Controller, env: Env, ctx: Ctx) {
    let started = false;
    let result: Awaited<ReturnType<typeof once>>;
    let runKey = "";
    try {
      const manager = typeof locks === "function" ? locks(env) : locks;
      runKey =
        key === undefined
          ? `scheduled:${name}:${controller.cron}:${controller.scheduledTime}`
          : key(controller, env);
      const run = (lock: Lock) => {
        started = true;
        return handler(controller, env, ctx, lock);
      };
      result = await once(manager, runKey, run, {
        retention,
        budget: budget === undefined ? budgets.workersScheduled() : budget(controller, env),
        ...(lease === undefined ? {} : { lease }),
      });
    } catch (error) {
      // A ConfigurationError before the job ran (the manager, the key, the options) comes back on
      // every retry of this event: retrying cannot help, so the platform is told not to. The
      // event still fails, with the error. The job's own errors keep the runtime's retry.
      if (!started && isConfigurationError(error)) controller.noRetry();
      throw error;
    }
    if (result.status === "ran") return;
    controller.noRetry();
    if (onSkip === undefined) {
      // Visible by default (wrangler dev, wrangler tail); an app with onSkip decides itself.
      logSkip(runKey, result.reason, result.retryAfter);
      return;
    }
    await onSkip(
      { key: runKey, reason: result.reason, retryAfter: result.retryAfter },
      controller,
      env,
    );
  };
}

/**
 * Longest accepted job `name`, in UTF-8 bytes: the default key
 * `scheduled:${name}:${cron}:${scheduledTime}` then leaves about 480 bytes for the cron
 * expression and the time within a lock key's 1,024 bytes (`MAX_KEY_BYTES`).
 *
 * @example
 * dedupeScheduled(job, { locks, name: "x".repeat(MAX_JOB_NAME_BYTES) }); // the longest name
 */
export const MAX_JOB_NAME_BYTES = 512;

/**
 * `name` is the job's identity in the default key: required without `key`, refused with it, and
 * at most {@link MAX_JOB_NAME_BYTES} bytes. It may contain `:`: a cron expression never does and
 * the time is digits, so the key's last two fields are always the cron and the time, and two
 * distinct (name, cron) pairs never share a key.
 */
function checkJobName(name: unknown, keyed: boolean): void {
  if (keyed) {
    if (name !== undefined) {
      throw new ConfigurationError(
        "name",
        "pass `name` or `key`, not both (`key` replaces the key `name` is part of)",
      );
    }
    return;
  }
  if (typeof name !== "string" || name.trim() === "") {
    throw new ConfigurationError(
      "name",
      "expected the job's name (a non-empty string, unique among the Workers sharing these nodes " +
        "and prefix): without it two Workers on the same cron would share one key per scheduled " +
        "time and only one of their jobs would run",
    );
  }
  const length = new TextEncoder().encode(name).length;
  if (length > MAX_JOB_NAME_BYTES) {
    throw new ConfigurationError(
      "name",
      `${length} bytes; at most ${MAX_JOB_NAME_BYTES} (UTF-8), so that the key ` +
        "`scheduled:<name>:<cron>:<scheduledTime>` fits a lock key's 1024 bytes",
    );
  }
}
