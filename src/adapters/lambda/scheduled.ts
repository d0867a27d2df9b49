import { budget, type LambdaContextLike } from "../../budget";
import { checkRetention, logSkip, once } from "../../dedupe";
import {
  ConfigurationError,
  checkFunction,
  checkOptionsWithLocks,
  optionalMs,
  optionalNonNegative,
} from "../../errors";
import { checkLeaseWith, checkLocksOption } from "../../lock";
import { scheduledKey } from "./scheduled-key";
import type { DedupeScheduledOptions, ScheduledJob, ScheduledSkipped } from "./scheduled-types";
import type { LambdaContext, LambdaHandler } from "./types";

const KNOWN = new Set(["locks", "key", "retention", "lease", "margin", "reserve", "onSkip"]);

/**
 * Run a scheduled Lambda (EventBridge rule or EventBridge Scheduler) at most once per occurrence.
 * Both invoke Lambda asynchronously: an event can arrive more than once, and a failed run is
 * retried. Each invocation goes through `once()` under a key of the occurrence (see `key`):
 * - first invocation: takes the lock (TTL sized from `context.getRemainingTimeInMillis()`,
 *   auto-extended), runs `handler(event, context, lock)`, and on success leaves a done marker for
 *   `retention` ms; returns the handler's result;
 * - a duplicate while it runs, or after it finished: returns `{ skipped: true, reason, retryAfter }`
 *   without running the handler, after `onSkip` (without one, a `console.info` line naming the
 *   key and why: an asynchronous invocation's result is seen by nobody);
 * - `handler` throws: the lock is released (no marker) and the error rethrown, so Lambda's
 *   asynchronous retry runs the job; lock failures (`QuorumError`, `BudgetExhaustedError`) are
 *   rethrown too, without running `handler`.
 * The release or the done marker is awaited on every node (each answered or its request timed
 * out, not only a majority) before the invocation returns: a frozen environment runs nothing
 * afterwards. A run whose marker could not be written on a majority of nodes still
 * returns its result; the manager's `onEvent` reports it (`{ type: "complete", result:
 * "unrecorded" }`), and a later duplicate may run again.
 *
 * Keys (default) name the job by `context.invokedFunctionArn` (the target's function ARN, with its
 * alias or version if the target names one): an EventBridge rule event →
 * `scheduled:${invokedFunctionArn}:${resources[0]}:${time}`; a Scheduler input →
 * `scheduled:${invokedFunctionArn}:${scheduleArn}:${scheduledTime}`, from the target `Input`
 * `{"scheduleArn":"<aws.scheduler.schedule-arn>","scheduledTime":"<aws.scheduler.scheduled-time>"}`
 * (`schedule-arn` / `scheduled-time` are read too). The per-attempt
 * `<aws.scheduler.execution-id>` is never used. Any other event needs the `key` option.
 *
 * Defaults: `retention` 24 h, `lease` from `createLocks` (10000 ms), `margin` 1000 ms, `reserve` 0.
 *
 * @param handler `(event, context, lock) => Promise<result>`; async only
 * @param options see {@link DedupeScheduledOptions}
 * @returns an async `(event, context)` handler resolving to the result or a {@link ScheduledSkipped}
 * @throws {ConfigurationError} at wrap time, naming the invalid option; per invocation, `key` when
 *   no key can be derived from the event, `context` for a context without
 *   `getRemainingTimeInMillis()` (or, for the default key, without `invokedFunctionArn`)
 * @example
 * import { dedupeScheduled } from "edgelock/lambda";
 *
 * // EventBridge rule "cron(0 3 * * ? *)" → this function
 * export const nightly = dedupeScheduled(
 *   async (event, context, lock) => {
 *     await rebuildReports({ signal: lock.signal });
 *     return { rebuilt: true };
 *   },
 *   { locks: getLocks, lease: 60_000, retention: 2 * 24 * 60 * 60 * 1000 },
 * );
 */
export function dedupeScheduled<
  TEvent = unknown,
  TResult = unknown,
  TContext extends LambdaContextLike = LambdaContext,
>(
  handler: ScheduledJob<TEvent, TResult, TContext>,
  options: DedupeScheduledOptions<TEvent, TContext>,
): LambdaHandler<TEvent, TResult | ScheduledSkipped, TContext> {
  checkFunction("handler", handler);
  checkOptionsWithLocks(options, KNOWN, "dedupeScheduled");
  const { locks, key, onSkip } = options;
  checkLocksOption(locks);
  if (key !== undefined) checkFunction("key", key);
  if (onSkip !== undefined) checkFunction("onSkip", onSkip);
  const retention = checkRetention(options.retention);
  const lease = optionalMs("lease", options.lease, 1);
  checkLeaseWith(locks, lease);
  const margin = optionalNonNegative("margin", options.margin);
  const reserve = optionalNonNegative("reserve", options.reserve);
  const budgetOptions = {
    ...(margin === undefined ? {} : { margin }),
    ...(reserve === undefined ? {} : { reserve }),
  };

  // Exactly two parameters: the Node.js runtime must see a promise-style handler.
  return async function dedupedScheduled(
    event: TEvent,
    context: TContext,
  ): Promise<TResult | ScheduledSkipped> {
    // First, so an invalid context fails before any node is called.
    const invocationBudget = budget.lambda(context, budgetOptions);
    const runKey =
      key === undefined ? scheduledKey(event, jobOf(context)) : await key(event, context);
    if (runKey === undefined) {
      throw new ConfigurationError(
        "key",
        "the event is neither an EventBridge scheduled rule event (resources[0] + time) nor a " +
          "Scheduler input with scheduleArn + scheduledTime; pass a `key` function",
      );
    }
    const manager = typeof locks === "function" ? await locks(event, context) : locks;
    const result = await once(manager, runKey, (lock) => handler(event, context, lock), {
      retention,
      budget: invocationBudget,
      ...(lease === undefined ? {} : { lease }),
    });
    if (result.status === "ran") return result.value;
    const { reason, retryAfter } = result;
    // Visible by default (CloudWatch); an app with onSkip decides itself.
    if (onSkip === undefined) logSkip(runKey, reason, retryAfter);
    else await onSkip({ key: runKey, reason, retryAfter }, event, context);
    return { skipped: true, reason, retryAfter };
  };
}

/** The job's identity for the default key: the context's `invokedFunctionArn`. */
function jobOf(context: LambdaContextLike): string {
  const arn = (context as { readonly invokedFunctionArn?: unknown }).invokedFunctionArn;
  if (typeof arn !== "string" || arn.trim() === "") {
    throw new ConfigurationError(
      "context",
      "the default key names the job by `context.invokedFunctionArn`, which this context lacks; " +
        "pass Lambda's context or a `key` function",
    );
  }
  return arn;
}
