import { budget, type LambdaContextLike } from "../../budget";
import { isLockBusyError } from "../../errors";
import type { Lock } from "../../lock";
import { markLockAnswer } from "./lock-answer";
import { resolveWithLock } from "./options";
import type { LambdaContext, LambdaHandler, LockedHandler, WithLockOptions } from "./types";

/**
 * Wrap an async AWS Lambda handler so that it runs only while holding the lock
 * `options.key(event, context)`.
 *
 * Per invocation: a budget from `context.getRemainingTimeInMillis()` (`budget.lambda`, with
 * `margin` and `reserve`), then `locks.acquire(key, { lease, wait, budget, autoExtend: true })`,
 * so the lock's TTL is `min(lease, remaining + margin)`: it never outlives an invocation that
 * timed out (nothing runs after a Lambda timeout, so no release would). The handler gets the lock
 * as its third argument; `lock.signal` aborts shortly before the deadline or when the lock is
 * lost. The release is awaited before the wrapper returns, also when the handler throws (a frozen
 * environment runs nothing afterwards), and the handler's error is rethrown unchanged.
 *
 * Busy lock: throws the `LockBusyError` (`retryAfter` in ms), so asynchronous invocations
 * (EventBridge, S3, SNS…) are retried by Lambda; `onBusy` returns a value instead, which a
 * `withIdempotency` around this wrapper never keeps, whatever its status. Other lock
 * failures (`QuorumError`, `BudgetExhaustedError`) and errors of `key`/`locks` propagate as they
 * are; the handler is not called.
 *
 * Defaults: `lease` and `wait` from `createLocks` (10000 ms, 0 ms), `margin` 1000 ms, `reserve`
 * 0 ms, no `onBusy` (throw).
 *
 * @param handler `(event, context, lock) => Promise<result>`; async only, no callback style
 * @param options see {@link WithLockOptions}
 * @returns an async `(event, context)` handler, assignable to `Handler<TEvent, TResult>` of
 *   `@types/aws-lambda`
 * @throws {ConfigurationError} at wrap time, naming the invalid option
 * @example
 * import { createLocks, type Locks, nodesFromEnv } from "edgelock";
 * import { withLock } from "edgelock/lambda";
 *
 * let locks: Locks | undefined; // built once per container, on first use
 * const getLocks = () => (locks ??= createLocks({ nodes: nodesFromEnv(process.env) }));
 *
 * export const chargeInvoice = withLock(
 *   async (event: { invoiceId: string }, context, lock) => {
 *     await charge(event.invoiceId, { signal: lock.signal });
 *     return { charged: event.invoiceId };
 *   },
 *   { locks: getLocks, key: (event) => `invoice:${event.invoiceId}`, lease: 30_000 },
 * );
 */
export function withLock<
  TEvent = unknown,
  TResult = unknown,
  TContext extends LambdaContextLike = LambdaContext,
>(
  handler: LockedHandler<TEvent, TResult, TContext>,
  options: WithLockOptions<TEvent, NoInfer<TResult>, TContext>,
): LambdaHandler<TEvent, TResult, TContext> {
  const resolved = resolveWithLock(handler, options);
  const { acquire, onBusy } = resolved;
  // Exactly two parameters: the Node.js runtime must see a promise-style handler.
  return async function lockedHandler(event: TEvent, context: TContext): Promise<TResult> {
    // The deadline is fixed by the context, so the budget is the same whenever it is built; build
    // it first so an invalid context fails before any node is called.
    const invocationBudget = budget.lambda(context, resolved.budget);
    const locks = await resolved.locks(event, context);
    const key = await resolved.key(event, context);
    let lock: Lock;
    try {
      lock = await locks.acquire(key, { ...acquire, budget: invocationBudget, autoExtend: true });
    } catch (error) {
      if (onBusy !== undefined && isLockBusyError(error)) {
        // Marked, whatever it is: a `withIdempotency` around this never keeps a busy answer.
        return markLockAnswer(context, await onBusy(event, context, error));
      }
      throw error;
    }
    try {
      return await handler(event, context, lock);
    } finally {
      // Wait for every node's answer (bounded by the request timeout), not only a majority's:
      // the container freezes when we return, and a DEL still in flight would leave the key on
      // that node until its TTL. release() never throws; the guard keeps the handler's own error
      // from ever being masked.
      await lock.release({ settled: true }).catch(() => undefined);
    }
  };
}
