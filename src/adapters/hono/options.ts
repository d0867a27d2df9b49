/**
 * The option checks `lock()` and `limit()` share: both take `locks`, `lease`, `wait`, `budget`,
 * `retryAfter`, `exposeDetails`, `unreadBodyTimeout`, `onBusy`, `onError` and `onUnavailable`,
 * checked alike when the middleware is built, and a `key(c)` whose result is checked per request.
 *
 * @module
 */
import { ConfigurationError, checkOptionsWithLocks, optionalMs, shown } from "../../errors";
import { checkLeaseWith, isLocks } from "../../lock";

/** A middleware's options as the checks read them (any object: unknown names are refused). */
type Loose = Readonly<Record<string, unknown>>;

/**
 * Check the options `lock()` and `limit()` share when the middleware is built, naming the bad
 * option: an object of `known` names only, `locks` a manager or a function, the durations, the
 * flag and the callbacks. The middleware checks its own (`key`, `fencing`, `permits`) after.
 *
 * @param of - the middleware's name in messages, `"lock()"`
 * @param usage - what it expects, `"{ locks, key }"`
 * @throws {ConfigurationError} naming the option
 * @example
 * checkMiddlewareOptions(options, KNOWN, "lock()", "{ locks, key }");
 */
export function checkMiddlewareOptions(
  options: Loose,
  known: ReadonlySet<string>,
  of: string,
  usage: string,
): void {
  if (typeof options !== "object" || options === null) {
    throw new ConfigurationError("options", `${of} expects an options object ${usage}`);
  }
  // An array or a Map is refused as `options`, not read as "no locks".
  checkOptionsWithLocks(options, known, of);
  const { locks, lease, wait } = options;
  if (typeof locks !== "function" && !isLocks(locks)) {
    throw new ConfigurationError("locks", "expected createLocks(...) or a function (c) => Locks");
  }
  checkLeaseWith(locks, optionalMs("lease", lease, 1));
  optionalMs("wait", wait, 0);
  optionalMs("retryAfter", options.retryAfter, 1);
  if (options.exposeDetails !== undefined && typeof options.exposeDetails !== "boolean") {
    throw new ConfigurationError(
      "exposeDetails",
      `expected a boolean, got ${shown(options.exposeDetails)}`,
    );
  }
  optionalMs("unreadBodyTimeout", options.unreadBodyTimeout, 1);
  for (const name of ["budget", "onBusy", "onError", "onUnavailable"] as const) {
    if (options[name] !== undefined && typeof options[name] !== "function") {
      throw new ConfigurationError(name, "expected a function of the context");
    }
  }
}

const isKey = (k: unknown): k is string => typeof k === "string" && k !== "";

/**
 * `key(c)`'s result as the manager takes it: a non-empty string, or (`several`, `lock()`'s) a
 * non-empty array of them; `limit()` takes a string only (a semaphore has one name). Anything
 * else (a missing route parameter's `undefined`, `""`) is the route's fault, named here before
 * any node is asked.
 *
 * @throws {ConfigurationError} naming `key`
 * @example
 * const lockKey = checkedKey(await key(c));
 */
export function checkedKey(value: unknown, several = true): string | string[] {
  if (isKey(value)) return value;
  if (several && Array.isArray(value) && value.length > 0 && value.every(isKey)) return value;
  const what = Array.isArray(value)
    ? `[${value.map((k) => (k === "" ? '""' : String(k))).join(", ")}]`
    : value === ""
      ? "an empty string"
      : String(value);
  throw new ConfigurationError(
    "key",
    `key(c) returned ${what}, expected a non-empty string${several ? " or a non-empty array of them" : ""} (does the route have the parameter it reads?)`,
  );
}
