import { ConfigurationError, checkKnown, shown } from "../errors";

/**
 * Options shared by every budget factory.
 *
 * @example
 * budget.within(5_000, { margin: 500, reserve: 2_000, subrequests: 50 })
 */
export interface BudgetOptions {
  /**
   * Grace in ms added to the remaining time when sizing a lock's TTL:
   * `ttl = min(lease, remaining + margin)`. It covers the release round trip and the drift that
   * validity subtracts, so the lock stays valid up to the deadline but not much longer.
   * @default 1000
   */
  readonly margin?: number | undefined;
  /**
   * Time in ms the protected work needs (a.k.a. minimum hold). Waiting for a busy lock stops while
   * at least this much time is left, and an acquire with less than this left throws
   * `BudgetExhaustedError` without calling any node.
   * @default 0
   */
  readonly reserve?: number | undefined;
  /**
   * Allowance of node requests (on Workers: subrequests). Every node request charges 1. An acquire
   * round needs N (2N with fencing on N > 1) and must leave N for the release.
   * @default undefined (no allowance; only time counts), except for the Workers factories
   */
  readonly subrequests?: number | undefined;
}

/**
 * An execution budget: a monotonic deadline (on `performance.now()`) and an optional allowance of
 * node requests. Create one per invocation with the `budget` factories and pass it to
 * `acquire`/`using`; the lock charges its node requests to it and sizes every TTL from it.
 *
 * @example
 * const b = budget.within(10_000);
 * b.remaining(); // ~10000
 * b.ttl(30_000); // min(30000, remaining + margin) -> ~11000
 */
export interface Budget {
  /** Deadline on the `performance.now()` clock. */
  readonly deadline: number;
  /** The same deadline as epoch ms (`Date.now()` clock), for display and `validUntil`. */
  readonly deadlineEpoch: number;
  /** See {@link BudgetOptions.margin}. */
  readonly margin: number;
  /** See {@link BudgetOptions.reserve}. */
  readonly reserve: number;
  /** Total allowance of node requests, `undefined` when unlimited. */
  readonly subrequests: number | undefined;
  /** Node requests charged so far. */
  readonly spent: number;
  /** Milliseconds left until the deadline (negative once passed). */
  remaining(): number;
  /** Node requests left in the allowance (`Infinity` when unlimited; never negative). */
  remainingSubrequests(): number;
  /** Record `requests` node requests (default 1). @throws {ConfigurationError} `requests` not an integer >= 0 */
  charge(requests?: number): void;
  /**
   * TTL for a grant or extension: `min(lease, remaining + margin)`, floored, at least 0.
   * @throws {ConfigurationError} `lease` not a number >= 0
   */
  ttl(lease: number): number;
}

/** Default {@link BudgetOptions.margin} in ms. */
export const DEFAULT_MARGIN = 1_000;

class ExecutionBudget implements Budget {
  readonly deadline: number;
  readonly deadlineEpoch: number;
  readonly margin: number;
  readonly reserve: number;
  readonly subrequests: number | undefined;
  #spent = 0;

  constructor(remainingMs: number, options: BudgetOptions) {
    const now = performance.now();
    this.deadline = now + remainingMs;
    this.deadlineEpoch = Date.now() + remainingMs;
    this.margin = options.margin ?? DEFAULT_MARGIN;
    this.reserve = options.reserve ?? 0;
    this.subrequests = options.subrequests;
  }

  get spent(): number {
    return this.#spent;
  }

  remaining(): number {
    return this.deadline - performance.now();
  }

  remainingSubrequests(): number {
    return this.subrequests === undefined
      ? Number.POSITIVE_INFINITY
      : Math.max(0, this.subrequests - this.#spent);
  }

  charge(requests = 1): void {
    // A string would turn the count into text and every later comparison into nonsense.
    if (typeof requests !== "number" || !Number.isSafeInteger(requests) || requests < 0) {
      throw new ConfigurationError("requests", `expected an integer >= 0, got ${shown(requests)}`);
    }
    this.#spent += requests;
  }

  ttl(lease: number): number {
    if (typeof lease !== "number" || Number.isNaN(lease) || lease < 0) {
      throw new ConfigurationError("lease", `expected a number of ms >= 0, got ${shown(lease)}`);
    }
    return Math.max(0, Math.floor(Math.min(lease, this.remaining() + this.margin)));
  }
}

const OPTIONS: ReadonlySet<string> = new Set(["margin", "reserve", "subrequests"]);

function checkNonNegative(option: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
    throw new ConfigurationError(option, `expected a finite number >= 0, got ${shown(value)}`);
  }
}

/**
 * Validate the shared options and build a budget with `remainingMs` left from now.
 * Factories call this; it is exported for adapters that compute their own remaining time.
 *
 * @throws {ConfigurationError} for a negative or non-finite option, an unknown one, or options
 *   that are not a plain object (only `undefined` means none)
 * @example
 * const b = createBudget(2_000, { reserve: 500 });
 */
export function createBudget(remainingMs: number, options?: BudgetOptions): Budget {
  if (typeof remainingMs !== "number" || !Number.isFinite(remainingMs)) {
    throw new ConfigurationError(
      "remaining",
      `expected a finite number of ms, got ${shown(remainingMs)}`,
    );
  }
  if (options === undefined) return new ExecutionBudget(remainingMs, {});
  checkKnown(options, OPTIONS, "createBudget()");
  checkNonNegative("margin", options.margin);
  checkNonNegative("reserve", options.reserve);
  const { subrequests } = options;
  if (subrequests !== undefined && !(Number.isInteger(subrequests) && subrequests > 0)) {
    throw new ConfigurationError(
      "subrequests",
      `expected a positive integer, got ${shown(subrequests)}`,
    );
  }
  return new ExecutionBudget(remainingMs, options);
}
