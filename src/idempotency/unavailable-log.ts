/**
 * The one server log line of a 503: what the HTTP adapters (Hono `lock()` and `idempotency()`,
 * Lambda `withIdempotency`) write with `console.error` when too few lock nodes answered or the
 * budget could not cover the lock, unless the app gives `onUnavailable`. Without it an operator
 * would see 503s and no cause. It names the route and the lock key (never a token, never the
 * query string, never the client's `Idempotency-Key`: that layer's key is a hash) and the cause
 * in words (the error's message: nodes by index and host).
 *
 * @module
 */
import type { BudgetExhaustedError, ErrorSubject, QuorumError } from "../errors";

/**
 * What `onUnavailable` gets: the request answered 503 (or the app's `onError` answer) because the
 * lock could not be decided.
 *
 * @example
 * onUnavailable: (c, { route, key, error }) => metrics.increment("lock.unavailable", { route })
 */
export interface UnavailableInfo {
  /** Method and path, without the query string: `"POST /invoices/42/charge"`. */
  readonly route: string;
  /**
   * The lock key (or keys) without the manager's prefix; for `idempotency()` / `withIdempotency`
   * the claim's key, `idempotency:<scope hash>:<key hash>` (the client's key is never logged).
   */
  readonly key: string | readonly string[];
  /** The cause: too few nodes answered, or the budget could not cover the acquire. */
  readonly error: QuorumError | BudgetExhaustedError;
  /**
   * What `key` names: a lock (`lock()`, `idempotency()`…), or a semaphore (`limit()`). The
   * adapters always set it; absent (an info built by hand), a lock.
   */
  readonly subject?: ErrorSubject;
}

/** The callback option: `(context, info)`; what it throws is ignored. */
export type OnUnavailable<C> = (c: C, info: UnavailableInfo) => void | Promise<void>;

/**
 * The default log line of a 503.
 *
 * @example
 * unavailableLine({ route: "POST /charge/42", key: "invoice:42", error, subject: "lock" });
 * // 'edgelock: 503 for POST /charge/42 (lock "invoice:42"): too few lock nodes answered: no majority (…)'
 */
export function unavailableLine({ route, key, error, subject = "lock" }: UnavailableInfo): string {
  const keys = typeof key === "string" ? JSON.stringify(key) : key.map((k) => JSON.stringify(k));
  const lock = typeof keys === "string" ? `${subject} ${keys}` : `locks ${keys.join(", ")}`;
  const cause =
    error.name === "BudgetExhaustedError"
      ? `the invocation's budget cannot cover the ${subject === "lock" ? "lock" : "permit"}`
      : "too few lock nodes answered";
  return `edgelock: 503 for ${route} (${lock}): ${cause}: ${detailOf(error)}`;
}

/** The error's words without the `lock "<key>": ` (or `semaphore "<key>": `) they start with. */
function detailOf(error: QuorumError | BudgetExhaustedError): string {
  const named = "key" in error ? `${error.subject} "${error.key}": ` : undefined;
  return named !== undefined && error.message.startsWith(named)
    ? error.message.slice(named.length)
    : error.message;
}

/**
 * Tell the app (its `onUnavailable`, errors ignored) or, without one, the server log
 * ({@link unavailableLine} with `console.error`) that a request could not take its lock.
 *
 * @example
 * await reportUnavailable(options.onUnavailable, c, { route, key, error });
 */
export async function reportUnavailable<C>(
  onUnavailable: OnUnavailable<C> | undefined,
  c: C,
  info: UnavailableInfo,
): Promise<void> {
  if (onUnavailable === undefined) {
    console.error(unavailableLine(info));
    return;
  }
  try {
    await onUnavailable(c, info);
  } catch {
    // The app's own callback: its failure changes nothing here.
  }
}

/**
 * `"METHOD /path"` without the query string (it may carry a token or other secret).
 *
 * @example
 * routeOf("post", "/charge/42?sig=abc"); // "POST /charge/42"
 */
export function routeOf(method: string, path: string): string {
  const query = path.indexOf("?");
  return `${method.toUpperCase()} ${query === -1 ? path : path.slice(0, query)}`;
}
