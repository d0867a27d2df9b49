import type { BudgetOptions, LambdaContextLike } from "../../budget";
import {
  checkFunction,
  checkOptionsWithLocks,
  optionalMs,
  optionalNonNegative,
} from "../../errors";
import type { AcquireOptions, Locks } from "../../lock";
import { checkLeaseWith, checkLocksOption } from "../../lock";
import type { WithLockOptions } from "./types";

const KNOWN = new Set(["locks", "key", "lease", "wait", "margin", "reserve", "onBusy"]);

/**
 * `withLock` options after validation, split by where they go: `acquire` to every
 * `locks.acquire`, `budget` to every `budget.lambda(context, …)`.
 *
 * @example
 * const { acquire, budget } = resolveWithLock(handler, { locks, key, lease: 30_000, margin: 500 });
 * // acquire: { lease: 30000 }, budget: { margin: 500 }
 */
export interface ResolvedWithLock<TEvent, TResult, TContext extends LambdaContextLike> {
  readonly locks: (event: TEvent, context: TContext) => Locks | Promise<Locks>;
  readonly key: WithLockOptions<TEvent, TResult, TContext>["key"];
  readonly onBusy: WithLockOptions<TEvent, TResult, TContext>["onBusy"];
  /** Passed to every `acquire` (with the invocation's budget and `autoExtend: true`). */
  readonly acquire: Pick<AcquireOptions, "lease" | "wait">;
  /** Passed to `budget.lambda(context, …)` on every invocation. */
  readonly budget: Pick<BudgetOptions, "margin" | "reserve">;
}

/**
 * Validate the handler and options of `withLock` once, when the handler is wrapped, so that a
 * misconfigured function fails at cold start rather than on its first event.
 *
 * @throws {ConfigurationError} naming the option (`handler`, `locks`, `key`, `lease`, `wait`,
 *   `margin`, `reserve`, `onBusy`, or an unknown one)
 * @example
 * const resolved = resolveWithLock(handler, { locks, key: (e) => e.id, lease: 30_000 });
 */
export function resolveWithLock<TEvent, TResult, TContext extends LambdaContextLike>(
  handler: unknown,
  options: WithLockOptions<TEvent, TResult, TContext>,
): ResolvedWithLock<TEvent, TResult, TContext> {
  checkFunction("handler", handler);
  checkOptionsWithLocks(options, KNOWN, "withLock");
  const { locks, key, onBusy } = options;
  checkLocksOption(locks);
  checkFunction("key", key);
  if (onBusy !== undefined) checkFunction("onBusy", onBusy);
  const lease = optionalMs("lease", options.lease, 1);
  checkLeaseWith(locks, lease);
  const wait = optionalMs("wait", options.wait, 0);
  const margin = optionalNonNegative("margin", options.margin);
  const reserve = optionalNonNegative("reserve", options.reserve);
  return {
    locks: typeof locks === "function" ? locks : () => locks,
    key,
    onBusy,
    // exactOptionalPropertyTypes: leave unset options out so the manager's defaults apply.
    acquire: {
      ...(lease === undefined ? {} : { lease }),
      ...(wait === undefined ? {} : { wait }),
    },
    budget: {
      ...(margin === undefined ? {} : { margin }),
      ...(reserve === undefined ? {} : { reserve }),
    },
  };
}
