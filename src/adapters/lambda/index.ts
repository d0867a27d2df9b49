/**
 * `edgelock/lambda`: AWS Lambda adapter. {@link withLock} runs an async handler while holding a
 * lock whose TTL is sized from `context.getRemainingTimeInMillis()`, and awaits the release before
 * the invocation returns; {@link withLimit} runs it holding one of a semaphore's permits (at most
 * `permits` invocations at once). {@link dedupeScheduled} runs an EventBridge rule or Scheduler target at
 * most once per scheduled occurrence. {@link withIdempotency} gives an HTTP handler (API Gateway,
 * Function URL) `Idempotency-Key` semantics. No dependency on `@types/aws-lambda` at run time: {@link LambdaContext}
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

export {
  DEFAULT_SCOPE_COOKIES,
  DEFAULT_SCOPE_HEADERS,
  defaultStore,
  TRANSIENT_STATUSES,
  type UnavailableInfo,
  type UnrecordedAnswer,
} from "../../idempotency";
export type { HttpEvent, HttpEventV1, HttpEventV2, HttpResult } from "./http";
export {
  type IdempotentInvocation,
  type WithIdempotencyOptions,
  withIdempotency,
} from "./idempotency";
export { dedupeScheduled } from "./scheduled";
export {
  type ScheduledRuleEvent,
  type SchedulerInput,
  scheduledKey,
} from "./scheduled-key";
export type { DedupeScheduledOptions, ScheduledJob, ScheduledSkipped } from "./scheduled-types";
export type { LambdaContext, LambdaHandler, LockedHandler, WithLockOptions } from "./types";
export { type LimitedHandler, type WithLimitOptions, withLimit } from "./with-limit";
export { withLock } from "./with-lock";
