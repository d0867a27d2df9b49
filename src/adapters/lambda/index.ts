/**
 * `edgelock/lambda`: AWS Lambda adapter. {@link withLock} runs an async handler while holding a
 * lock whose TTL is sized from `context.getRemainingTimeInMillis()`, and awaits the release before
 * the invocation returns. {@link dedupeScheduled} runs an EventBridge rule or Scheduler target at
 * most once per scheduled occurrence. No dependency on `@types/aws-lambda` at run time: {@link LambdaContext}
 * is structural.
 *
 * @example
 * import { withLock } from "edgelock/lambda";
 * export const handler = withLock(async (event: { id: string }, context, lock) => work(event, lock.signal), {
 *   locks,
 *   key: (event) => `job:${event.id}`,
 * });
 *
 * @module
 */
export { dedupeScheduled } from "./scheduled";
export {
  type ScheduledRuleEvent,
  type SchedulerInput,
  scheduledKey,
} from "./scheduled-key";
export type { DedupeScheduledOptions, ScheduledJob, ScheduledSkipped } from "./scheduled-types";
export type { LambdaContext, LambdaHandler, LockedHandler, WithLockOptions } from "./types";
export { withLock } from "./with-lock";
