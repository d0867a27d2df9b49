/**
 * Small option checks shared by `once()`, the adapters, the Idempotency-Key layer and memory
 * nodes, so every entry point rejects bad options the same way: a `ConfigurationError` naming the
 * option, at construction.
 *
 * @module
 */
import { ConfigurationError } from "./errors";

/**
 * Reject option names outside `known` (a typo would otherwise silently use a default), and any
 * symbol key (named as `Symbol(description)`).
 *
 * @throws {ConfigurationError} naming the unknown option, or `options` for a non-object
 * @example
 * checkKnown(options, new Set(["lease", "retention"]), "once");
 */
export function checkKnown(options: unknown, known: ReadonlySet<string>, of: string): void {
  if (typeof options !== "object" || options === null) {
    const got = options === null ? "null" : typeof options;
    throw new ConfigurationError("options", `expected an object, got ${got}`);
  }
  // An array or a Map has no unknown keys to find, yet is surely not the options meant.
  if (!isPlainObject(options)) {
    const kind = (Object.getPrototypeOf(options) as object).constructor?.name ?? "object";
    throw new ConfigurationError("options", `expected a plain object, got ${kind}`);
  }
  // Every own key, symbols too: a symbol-keyed entry is no option either, and would otherwise be
  // skipped without a word.
  for (const key of Reflect.ownKeys(options)) {
    if (!known.has(key as string))
      throw new ConfigurationError(String(key), `unknown option of ${of}`);
  }
}

/**
 * {@link checkKnown} for an entry point that takes a `locks` option (the adapters, the
 * Idempotency-Key layer): the manager itself passed where the options go (`limit(locks, {...})`)
 * is named as such, not as "unknown option `acquire`". Apart from `checkKnown` so that an app
 * importing `createLocks` alone does not carry it.
 *
 * @throws {ConfigurationError} naming `options` for the manager, else as `checkKnown`
 * @example
 * checkOptionsWithLocks(options, KNOWN, "withLimit");
 */
export function checkOptionsWithLocks(
  options: unknown,
  known: ReadonlySet<string>,
  of: string,
): void {
  if (typeof (options as { acquire?: unknown } | null)?.acquire === "function") {
    throw new ConfigurationError("options", `${of} got the lock manager: pass it as \`locks\``);
  }
  checkKnown(options, known, of);
}

/**
 * Whether `value` is a plain object: an object literal, one without a prototype, or one from
 * another realm (an iframe's, a `vm` context's) — not an array, a Map or a class instance.
 *
 * @example
 * isPlainObject({ lease: 5_000 }) // true
 * isPlainObject([]) // false
 */
export function isPlainObject(value: unknown): value is object {
  if (typeof value !== "object" || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return (
    proto === null || proto === Object.prototype || (proto as object).constructor?.name === "Object"
  );
}

/**
 * Check that `value` is a function.
 *
 * @throws {ConfigurationError} naming `option`
 * @example
 * checkFunction("handler", handler);
 */
export function checkFunction(option: string, value: unknown): void {
  if (typeof value !== "function") {
    throw new ConfigurationError(option, `expected a function, got ${typeof value}`);
  }
}

/**
 * Validate an optional integer of ms that is at least `min` (`lease`: 1, `wait`: 0); `undefined`
 * stays `undefined` so the manager's default applies.
 *
 * @throws {ConfigurationError} naming `option`
 * @example
 * optionalMs("lease", 30_000, 1) // 30000
 */
export function optionalMs(option: string, value: unknown, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new ConfigurationError(option, `expected an integer >= ${min} (ms), got ${shown(value)}`);
  }
  return value;
}

/**
 * Validate an optional finite number of ms ≥ 0 (budget `margin`, `reserve`).
 *
 * @throws {ConfigurationError} naming `option`
 * @example
 * optionalNonNegative("margin", 500) // 500
 */
export function optionalNonNegative(option: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new ConfigurationError(option, `expected a finite number >= 0 (ms), got ${shown(value)}`);
  }
  return value;
}

/**
 * `value` as words for an error message; never throws, even for a value that cannot become a
 * string (an object without a prototype, or whose `toString` throws): then its type. A string is
 * quoted, so that `"3"` does not read as the number 3.
 *
 * @example
 * shown(Object.create(null)) // "object"
 * shown(Symbol("x")) // "Symbol(x)"
 * shown("5s") // "\"5s\""
 */
export function shown(value: unknown): string {
  try {
    return typeof value === "string" ? JSON.stringify(value) : String(value);
  } catch {
    return typeof value;
  }
}
