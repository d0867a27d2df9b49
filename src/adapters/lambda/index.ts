/**
 * `edgelock/lambda`: AWS Lambda adapter. {@link withLock} runs an async handler while holding a
 * lock whose TTL is sized from `context.getRemainingTimeInMillis()`, and awaits the release before
 * the invocation returns. No dependency on `@types/aws-lambda` at run time: {@link LambdaContext}
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
export type { LambdaContext, LambdaHandler, LockedHandler, WithLockOptions } from "./types";
export { withLock } from "./with-lock";
