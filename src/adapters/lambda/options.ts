import type { BudgetOptions, LambdaContextLike } from "../../budget";
import { ConfigurationError } from "../../errors";
import type { AcquireOptions, Locks } from "../../lock/types";
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

const isLocks = (value: unknown): value is Locks =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { acquire?: unknown }).acquire === "function";

function integer(option: string, value: unknown, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new ConfigurationError(
      option,
      `expected an integer >= ${min} (ms), got ${String(value)}`,
    );
  }
  return value;
}

function nonNegative(option: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new ConfigurationError(
      option,
      `expected a finite number >= 0 (ms), got ${String(value)}`,
    );
  }
  return value;
}

function fn(option: string, value: unknown): void {
  if (typeof value !== "function") {
    throw new ConfigurationError(option, `expected a function, got ${typeof value}`);
  }
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
  fn("handler", handler);
  if (typeof options !== "object" || options === null) {
    throw new ConfigurationError("options", "expected an object with `locks` and `key`");
  }
  for (const name of Object.keys(options)) {
    if (!KNOWN.has(name)) throw new ConfigurationError(name, "unknown option of withLock");
  }
  const { locks, key, onBusy } = options;
  if (typeof locks !== "function" && !isLocks(locks)) {
    throw new ConfigurationError(
      "locks",
      "expected the manager from createLocks() or a function returning it",
    );
  }
  fn("key", key);
  if (onBusy !== undefined) fn("onBusy", onBusy);
  const lease = integer("lease", options.lease, 1);
  const wait = integer("wait", options.wait, 0);
  const margin = nonNegative("margin", options.margin);
  const reserve = nonNegative("reserve", options.reserve);
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
