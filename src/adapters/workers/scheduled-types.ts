import type { Budget } from "../../budget";
import type { Lock, Locks } from "../../lock";

/**
 * The parts of Cloudflare's `ScheduledController` that `dedupeScheduled` uses, declared
 * structurally so `edgelock/workers` needs no `@cloudflare/workers-types` at run time. The
 * runtime's controller (and `createScheduledController()` of `cloudflare:test`) fits.
 *
 * @example
 * const controller: ScheduledControllerLike = { cron: "0 3 * * *", scheduledTime: Date.now(), noRetry() {} };
 */
export interface ScheduledControllerLike {
  /** The planned fire time, epoch ms: the same on a retry or a duplicate of one trigger. */
  readonly scheduledTime: number;
  /** The Cron Trigger's expression, exactly as configured. */
  readonly cron: string;
  /** Tell the runtime not to retry this event. */
  noRetry(): void;
}

/**
 * A skipped trigger, as passed to `onSkip`.
 *
 * @example
 * { key: "scheduled:daily-digest:0 3 * * *:1767225600000", reason: "done", retryAfter: 86_123_456 }
 */
export interface ScheduledSkip {
  /** The dedupe key (without the manager's prefix). */
  readonly key: string;
  /** `"done"`: this scheduled time already ran; `"running"`: another run holds it now. */
  readonly reason: "done" | "running";
  /** Remaining retention of the done marker, or of the running holder's lock, in ms. */
  readonly retryAfter: number;
}

/**
 * The job `dedupeScheduled` wraps: Cloudflare's `scheduled(controller, env, ctx)` plus the held
 * lock. Stop when `lock.signal` aborts (lock lost, or the 15-minute wall time is near).
 *
 * @example
 * const job: DedupedScheduledHandler<Env> = async (controller, env, ctx, lock) => {
 *   await rebuild(env, { signal: lock.signal });
 * };
 */
export type DedupedScheduledHandler<
  Env,
  Controller extends ScheduledControllerLike = ScheduledControllerLike,
  Ctx = unknown,
> = (controller: Controller, env: Env, ctx: Ctx, lock: Lock) => Promise<void> | void;

/**
 * The handler `dedupeScheduled` returns: the shape of `ExportedHandlerScheduledHandler<Env>`, so it
 * goes straight into `export default { scheduled: … } satisfies ExportedHandler<Env>`.
 *
 * @example
 * const scheduled: ScheduledHandler<Env> = dedupeScheduled(job, { locks: locksFor });
 */
export type ScheduledHandler<
  Env,
  Controller extends ScheduledControllerLike = ScheduledControllerLike,
  Ctx = unknown,
> = (controller: Controller, env: Env, ctx: Ctx) => Promise<void>;

/**
 * Options of `dedupeScheduled`: `name` or `key`, and the rest. Validated when the handler is
 * wrapped (`ConfigurationError` names the option).
 *
 * @example
 * const options: DedupeScheduledOptions<Env> = {
 *   locks: (env) => locksFor(env),
 *   name: "daily-digest",
 *   lease: 60_000,
 *   retention: 2 * 24 * 60 * 60 * 1000,
 *   onSkip: (skip, controller) => console.log(`cron ${controller.cron}: ${skip.reason}, skipped`),
 * };
 */
export type DedupeScheduledOptions<
  Env,
  Controller extends ScheduledControllerLike = ScheduledControllerLike,
> = DedupeScheduledCommon<Env, Controller> &
  (
    | {
        /**
         * The job's name, unique among the Workers that share the nodes and prefix (e.g. the
         * Worker's script name): part of the default key
         * `scheduled:${name}:${controller.cron}:${controller.scheduledTime}`, so two Workers with
         * the same cron each run their own job. Required unless `key` is given (the runtime tells
         * a Worker neither its own name nor any other identity of the job). At most 512 UTF-8
         * bytes (`MAX_JOB_NAME_BYTES`); `:` is allowed (a cron expression never holds one).
         */
        readonly name: string;
        readonly key?: undefined;
      }
    | {
        readonly name?: undefined;
        /**
         * The dedupe key of one event (without the manager's prefix), instead of the default. It
         * must name the job: a key two jobs share runs only one of them per scheduled time.
         */
        readonly key: (controller: Controller, env: Env) => string;
      }
  );

/** The options of `dedupeScheduled` besides `name` / `key` (see {@link DedupeScheduledOptions}). */
export interface DedupeScheduledCommon<
  Env,
  Controller extends ScheduledControllerLike = ScheduledControllerLike,
> {
  /**
   * The lock manager, or a function of the env returning it (secrets arrive with the env; cache
   * the manager per env, do not build one per event).
   */
  readonly locks: Locks | ((env: Env) => Locks);
  /**
   * How long a finished run's done marker is kept, in ms: duplicates and retries within it are
   * skipped. @default 86400000 (24 h)
   */
  readonly retention?: number;
  /** Lease in ms of the lock held while the job runs (auto-extended). @default the `createLocks` lease */
  readonly lease?: number;
  /** The event's execution budget (a function: a budget starts with its event). @default `budget.workersScheduled()` */
  readonly budget?: (controller: Controller, env: Env) => Budget;
  /**
   * Called after `controller.noRetry()` when the event is skipped (logging, metrics).
   * @default one `console.info` line naming the key and why (`edgelock: skipped scheduled job …`)
   */
  readonly onSkip?: (skip: ScheduledSkip, controller: Controller, env: Env) => void | Promise<void>;
}
