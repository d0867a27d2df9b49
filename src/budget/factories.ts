import { ConfigurationError, checkKnown, shown } from "../errors";
import { type Budget, type BudgetOptions, createBudget } from "./budget";

/**
 * The part of an AWS Lambda context a budget needs (structural: no `@types/aws-lambda` needed at
 * run time; Hono exposes it as `c.env.lambdaContext`).
 *
 * @example
 * budget.lambda(c.env.lambdaContext satisfies LambdaContextLike)
 */
export interface LambdaContextLike {
  getRemainingTimeInMillis(): number;
}

/**
 * Options of {@link budget.workersFetch}.
 *
 * @example
 * budget.workersFetch({ wallMs: 20_000, subrequests: 1_000, reserve: 5_000 })
 */
export interface WorkersFetchBudgetOptions extends BudgetOptions {
  /**
   * Wall time in ms the fetch handler may run. Workers expose no deadline API; past ~30 s of
   * wall time (including `waitUntil`) work is unreliable.
   * @default 30000
   */
  readonly wallMs?: number | undefined;
  /**
   * Subrequest allowance (Free plan: 50 external subrequests per invocation; Paid: configurable).
   * @default 50
   */
  readonly subrequests?: number | undefined;
}

/**
 * Options of {@link budget.workersScheduled}.
 *
 * @example
 * budget.workersScheduled({ subrequests: 10_000 })
 */
export interface WorkersScheduledBudgetOptions extends BudgetOptions {
  /**
   * Subrequest allowance of the invocation.
   * @default 50
   */
  readonly subrequests?: number | undefined;
}

/** Wall-time limit of Workers Cron Triggers and queue consumers: 15 minutes. */
const SCHEDULED_WALL_MS = 15 * 60 * 1000;
const WORKERS_FREE_SUBREQUESTS = 50;

const SHARED = ["margin", "reserve", "subrequests"] as const;
const BUDGET_OPTIONS: ReadonlySet<string> = new Set(SHARED);
const FETCH_OPTIONS: ReadonlySet<string> = new Set([...SHARED, "wallMs"]);

/**
 * The options a factory was given, checked: only `undefined` means none; anything but a plain
 * object, or a name the factory does not know (`reserv`), is refused before a budget exists, so a
 * typo never leaves a lock with no reserve.
 */
function known<T extends object>(
  options: T | undefined,
  names: ReadonlySet<string>,
  of: string,
): T {
  if (options === undefined) return {} as T;
  checkKnown(options, names, of);
  return options;
}

function nonNegativeMs(option: string, value: number): number {
  if (!(Number.isFinite(value) && value >= 0)) {
    throw new ConfigurationError(
      option,
      `expected a finite number of ms >= 0, got ${shown(value)}`,
    );
  }
  return value;
}

/**
 * Factories for execution budgets. Create a budget at the start of an invocation and pass it to
 * `acquire` / `using`: every grant then gets `ttl = min(lease, remaining + margin)`, waiting stops
 * before it eats into `reserve`, and node requests are charged against `subrequests`.
 *
 * Defaults: `margin` 1000 ms, `reserve` 0 ms, no subrequest allowance (Workers factories: 50).
 *
 * @example
 * // AWS Lambda
 * export const handler = async (event, context) => {
 *   await locks.using("job", work, { budget: budget.lambda(context) });
 * };
 * // Cloudflare Worker fetch handler
 * const b = budget.workersFetch({ wallMs: 20_000, subrequests: 1000 });
 */
export const budget = {
  /**
   * Budget of an AWS Lambda invocation, from `context.getRemainingTimeInMillis()`.
   * @throws {ConfigurationError} `context` without `getRemainingTimeInMillis`, or an option
   *   that is unknown or out of range (named)
   */
  lambda(context: LambdaContextLike, options?: BudgetOptions): Budget {
    const checked = known(options, BUDGET_OPTIONS, "budget.lambda()");
    if (typeof context?.getRemainingTimeInMillis !== "function") {
      throw new ConfigurationError(
        "context",
        "expected a Lambda context with getRemainingTimeInMillis()",
      );
    }
    const remaining = context.getRemainingTimeInMillis();
    return createBudget(nonNegativeMs("context.getRemainingTimeInMillis()", remaining), checked);
  },

  /**
   * Budget of a Workers fetch handler: `wallMs` (default 30 s) and `subrequests` (default 50).
   * @throws {ConfigurationError} an option that is unknown or out of range (named)
   */
  workersFetch(options?: WorkersFetchBudgetOptions): Budget {
    const checked = known(options, FETCH_OPTIONS, "budget.workersFetch()");
    const { wallMs = 30_000, subrequests = WORKERS_FREE_SUBREQUESTS, ...rest } = checked;
    return createBudget(nonNegativeMs("wallMs", wallMs), { ...rest, subrequests });
  },

  /**
   * Budget of a Workers scheduled (Cron Trigger) or queue handler: 15 minutes of wall time.
   * @throws {ConfigurationError} an option that is unknown or out of range (named)
   */
  workersScheduled(options?: WorkersScheduledBudgetOptions): Budget {
    const checked = known(options, BUDGET_OPTIONS, "budget.workersScheduled()");
    const { subrequests = WORKERS_FREE_SUBREQUESTS, ...rest } = checked;
    return createBudget(SCHEDULED_WALL_MS, { ...rest, subrequests });
  },

  /**
   * Budget ending at an epoch-ms deadline (`Date.now()` clock, converted once to the monotonic
   * clock). A deadline in the past gives an exhausted budget.
   * @throws {ConfigurationError} `deadline` not finite, or an option that is unknown or out of
   *   range (named)
   */
  until(deadlineEpochMs: number, options?: BudgetOptions): Budget {
    const checked = known(options, BUDGET_OPTIONS, "budget.until()");
    if (!Number.isFinite(deadlineEpochMs)) {
      throw new ConfigurationError("deadline", `expected epoch ms, got ${shown(deadlineEpochMs)}`);
    }
    return createBudget(deadlineEpochMs - Date.now(), checked);
  },

  /**
   * Budget ending `ms` milliseconds from now.
   * @throws {ConfigurationError} `ms` not a finite number >= 0, or an option that is unknown or
   *   out of range (named)
   */
  within(ms: number, options?: BudgetOptions): Budget {
    const checked = known(options, BUDGET_OPTIONS, "budget.within()");
    return createBudget(nonNegativeMs("ms", ms), checked);
  },
} as const;
