import { budget, type LambdaContextLike } from "../../budget";
import {
  ConfigurationError,
  checkFunction,
  checkOptionsWithLocks,
  isSemaphoreBusyError,
  type SemaphoreBusyError,
} from "../../errors";
import { isLocks, type Locks } from "../../lock";
import { checkPermits, type Permit, type Semaphore, semaphore } from "../../semaphore";
import { markLockAnswer } from "./lock-answer";
import { resolveWithLock } from "./options";
import type { LambdaContext, LambdaHandler, WithLockOptions } from "./types";

/**
 * The function `withLimit` wraps: an async Lambda handler that also receives its permit. Stop
 * work when `permit.signal` aborts (a `LockLostError`: the permit was lost, or the deadline is
 * near).
 *
 * @example
 * const work: LimitedHandler<{ prompt: string }, string> = (event, context, permit) =>
 *   callTheModel(event.prompt, { signal: permit.signal });
 */
export type LimitedHandler<TEvent, TResult, TContext extends LambdaContextLike = LambdaContext> = (
  event: TEvent,
  context: TContext,
  permit: Permit,
) => Promise<TResult>;

/**
 * Options of `withLimit`: `withLock`'s (`locks`, `lease`, `wait`, `margin`, `reserve`, `onBusy`,
 * with the same defaults), a semaphore name as `key`, and `permits`. Validated when the handler is
 * wrapped (`ConfigurationError` names the option).
 *
 * @example
 * const options: WithLimitOptions<{ prompt: string }, string> = {
 *   locks, key: "llm-calls", permits: 3, wait: 2_000, onBusy: () => "busy",
 * };
 */
export interface WithLimitOptions<
  TEvent,
  TResult,
  TContext extends LambdaContextLike = LambdaContext,
> extends Omit<WithLockOptions<TEvent, TResult, TContext>, "key" | "onBusy"> {
  /** The semaphore's name, or a function of the invocation returning it (a limit per tenant). */
  readonly key: string | ((event: TEvent, context: TContext) => string | Promise<string>);
  /** How many invocations run the handler at once, across every container: 1 to 64. */
  readonly permits: number;
  /**
   * Called instead of throwing when every permit stayed held (after `wait`); its value is
   * returned, and a `withIdempotency` around this wrapper never keeps it. Without it the
   * `SemaphoreBusyError` is thrown, so asynchronous invocations are retried by Lambda.
   * @default undefined (throw)
   */
  readonly onBusy?: (
    event: TEvent,
    context: TContext,
    error: SemaphoreBusyError,
  ) => TResult | Promise<TResult>;
}

const KNOWN = new Set(["locks", "key", "permits", "lease", "wait", "margin", "reserve", "onBusy"]);

/**
 * Wrap an async AWS Lambda handler so that at most `permits` invocations run it at once, across
 * every container: `withLock` with a counting semaphore (docs/SAFETY.md §4c) in place of the
 * lock.
 *
 * Per invocation: a budget from `context.getRemainingTimeInMillis()` (`budget.lambda`, with
 * `margin` and `reserve`), then a permit of `key` (`lease`, `wait`, auto-extended), so its TTL is
 * `min(lease, remaining + margin)`: it never outlives an invocation that timed out. The handler
 * gets the permit as its third argument. Its release, with every node's answer, is awaited
 * before the wrapper returns, also when the handler throws (its error is rethrown unchanged).
 *
 * Every permit held: throws the `SemaphoreBusyError` (the invoker retries), or returns
 * `onBusy`'s value, marked so a `withIdempotency` around never keeps it. Other failures
 * (`QuorumError`, `BudgetExhaustedError`, a bad `key`) propagate; the handler is not called.
 *
 * @param handler `(event, context, permit) => Promise<result>`; async only
 * @param options see {@link WithLimitOptions}
 * @returns an async `(event, context)` handler
 * @throws {ConfigurationError} at wrap time, naming the invalid option
 * @example
 * import { withLimit } from "edgelock/lambda";
 *
 * export const generate = withLimit(
 *   async (event: { prompt: string }, context, permit) =>
 *     callTheModel(event.prompt, { signal: permit.signal }),
 *   { locks: getLocks, key: "llm-calls", permits: 3, wait: 5_000 },
 * );
 */
export function withLimit<
  TEvent = unknown,
  TResult = unknown,
  TContext extends LambdaContextLike = LambdaContext,
>(
  handler: LimitedHandler<TEvent, TResult, TContext>,
  options: WithLimitOptions<TEvent, NoInfer<TResult>, TContext>,
): LambdaHandler<TEvent, TResult, TContext> {
  checkFunction("handler", handler);
  checkOptionsWithLocks(options, KNOWN, "withLimit");
  const { key, permits, onBusy, ...rest } = options;
  if (typeof key !== "string" && typeof key !== "function") {
    const got = Array.isArray(key)
      ? "an array (a semaphore has one name)"
      : key === null
        ? "null"
        : typeof key;
    throw new ConfigurationError("key", `expected a string or a function, got ${got}`);
  }
  if (key === "") throw new ConfigurationError("key", "expected a non-empty string");
  // withLock's checks for the rest; `key` and `onBusy` as functions, whatever they take.
  const resolved = resolveWithLock(handler, {
    ...rest,
    key: typeof key === "string" ? () => key : key,
    ...(onBusy === undefined ? {} : { onBusy }),
  } as unknown as WithLockOptions<TEvent, TResult, TContext>);
  const count = checkPermits(permits);
  // Fixed manager and name: built once, checking the name against the manager now.
  const fixed: Semaphore | undefined =
    isLocks(options.locks) && typeof key === "string"
      ? semaphore(options.locks, key, { permits: count })
      : undefined;
  // Exactly two parameters: the Node.js runtime must see a promise-style handler.
  return async function limitedHandler(event: TEvent, context: TContext): Promise<TResult> {
    // Built first, so an invalid context fails before any node is called.
    const invocationBudget = budget.lambda(context, resolved.budget);
    const limiter = fixed ?? (await semaphoreOf(resolved, event, context, count));
    let permit: Permit;
    try {
      permit = await limiter.acquire({
        ...resolved.acquire,
        budget: invocationBudget,
        autoExtend: true,
      });
    } catch (error) {
      if (onBusy !== undefined && isSemaphoreBusyError(error)) {
        // Marked, whatever it is: a `withIdempotency` around this never keeps a busy answer.
        return markLockAnswer(context, await onBusy(event, context, error));
      }
      throw error;
    }
    try {
      return await handler(event, context, permit);
    } finally {
      // Every node's answer before the container freezes (as withLock); release() never throws,
      // and the guard keeps the handler's own error from ever being masked.
      await permit.release({ settled: true }).catch(() => undefined);
    }
  };
}

/** This invocation's semaphore: its manager and name asked now (`semaphore()` checks the name). */
async function semaphoreOf<TEvent, TContext extends LambdaContextLike>(
  resolved: {
    readonly locks: (event: TEvent, context: TContext) => Locks | Promise<Locks>;
    readonly key: (event: TEvent, context: TContext) => unknown;
  },
  event: TEvent,
  context: TContext,
  permits: number,
): Promise<Semaphore> {
  const locks = await resolved.locks(event, context);
  const name = await resolved.key(event, context);
  return semaphore(locks, name as string, { permits });
}
