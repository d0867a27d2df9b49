import type { LambdaContextLike } from "../../budget";
import type { LockBusyError } from "../../errors";
import type { Lock, LockKey, Locks } from "../../lock";

/**
 * The AWS Lambda invocation context, declared structurally so that `edgelock/lambda` needs neither
 * `@types/aws-lambda` nor the AWS SDK at run time. The `Context` of `@types/aws-lambda` (and the
 * `LambdaContext` of `hono/aws-lambda`) is assignable to it, so wrapped handlers fit
 * `Handler<TEvent, TResult>` from `aws-lambda`. Only `getRemainingTimeInMillis()` is used.
 *
 * @example
 * import type { LambdaContext } from "edgelock/lambda";
 * const secondsLeft = (context: LambdaContext) => context.getRemainingTimeInMillis() / 1000;
 */
export interface LambdaContext extends LambdaContextLike {
  callbackWaitsForEmptyEventLoop: boolean;
  functionName: string;
  functionVersion: string;
  invokedFunctionArn: string;
  memoryLimitInMB: string;
  awsRequestId: string;
  logGroupName: string;
  logStreamName: string;
  /** Milliseconds left before the invocation times out. */
  getRemainingTimeInMillis(): number;
}

/**
 * The function `withLock` wraps: an async Lambda handler that also receives the held lock. Stop
 * work when `lock.signal` aborts (its reason is a `LockLostError`): the lock was lost, or the
 * invocation's deadline is near.
 *
 * @example
 * const work: LockedHandler<{ id: string }, string> = async (event, context, lock) => {
 *   await fetch(`https://api.example.com/jobs/${event.id}`, { method: "POST", signal: lock.signal });
 *   return "done";
 * };
 */
export type LockedHandler<TEvent, TResult, TContext extends LambdaContextLike = LambdaContext> = (
  event: TEvent,
  context: TContext,
  lock: Lock,
) => Promise<TResult>;

/**
 * The handler `withLock` returns: async, exactly two parameters `(event, context)` (never the
 * callback style, which newer Node.js runtimes reject), assignable to `Handler<TEvent, TResult>`
 * of `@types/aws-lambda`.
 *
 * @example
 * import type { Handler } from "aws-lambda";
 * export const handler: Handler<{ id: string }, string> = withLock(work, { locks, key: (e) => e.id });
 */
export type LambdaHandler<TEvent, TResult, TContext extends LambdaContextLike = LambdaContext> = (
  event: TEvent,
  context: TContext,
) => Promise<TResult>;

/**
 * Options of `withLock`. Validated when the handler is wrapped (`ConfigurationError` names the
 * option). The budget is always `budget.lambda(context, { margin, reserve })`, so every grant and
 * extension gets `ttl = min(lease, remaining + margin)` and the lock expires on its own shortly
 * after a timed-out invocation.
 *
 * @example
 * const options: WithLockOptions<{ invoiceId: string }, string> = {
 *   locks,                                  // or () => locks, built lazily once per container
 *   key: (event) => `invoice:${event.invoiceId}`,
 *   wait: 2_000,
 *   onBusy: () => "busy",
 * };
 */
export interface WithLockOptions<
  TEvent,
  TResult,
  TContext extends LambdaContextLike = LambdaContext,
> {
  /**
   * The lock manager from `createLocks`, or a function returning it (called on every invocation;
   * cache the manager in module scope so it is built once per container).
   */
  readonly locks: Locks | ((event: TEvent, context: TContext) => Locks | Promise<Locks>);
  /**
   * The lock key of one invocation (without the manager's prefix), or several keys locked
   * together (all or none, as `locks.acquire`).
   */
  readonly key: (event: TEvent, context: TContext) => LockKey | Promise<LockKey>;
  /** Lease in ms (TTL cap of one grant). @default the `createLocks` lease (10000) */
  readonly lease?: number;
  /** How long to wait for a busy lock, in ms; bounded by the time left. @default the `createLocks` wait (0) */
  readonly wait?: number;
  /** Budget margin in ms added to the remaining time when sizing the TTL. @default 1000 */
  readonly margin?: number;
  /**
   * Time in ms the handler needs: waiting stops while this much is left, and an invocation with
   * less than this left throws `BudgetExhaustedError` without calling any node. @default 0
   */
  readonly reserve?: number;
  /**
   * Called instead of throwing when the lock is busy; its value is returned by the wrapped
   * handler (for example an API Gateway 409 with `Retry-After: 1`: `error.retryAfter` is the
   * holder's TTL, which auto-extension renews, so it overstates the wait). Without it the
   * `LockBusyError` is thrown, so asynchronous invocations are retried by Lambda.
   * @default undefined (throw)
   */
  readonly onBusy?: (
    event: TEvent,
    context: TContext,
    error: LockBusyError,
  ) => TResult | Promise<TResult>;
}
