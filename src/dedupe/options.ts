import { ConfigurationError } from "../errors";

/** Default retention of a done marker: 24 hours, in ms. */
export const DEFAULT_RETENTION = 24 * 60 * 60 * 1000;

/**
 * Validate a `retention` option (ms a done marker is kept): `undefined` gives the default (24 h).
 *
 * @throws {ConfigurationError} option `retention` unless a positive safe integer
 * @example
 * checkRetention(undefined) // 86400000
 */
export function checkRetention(value: unknown): number {
  if (value === undefined) return DEFAULT_RETENTION;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigurationError(
      "retention",
      `expected a positive integer (ms), got ${String(value)}`,
    );
  }
  return value;
}

/**
 * Validate an optional positive integer of ms (e.g. `lease`); `undefined` stays `undefined`.
 *
 * @throws {ConfigurationError} naming `option`
 * @example
 * positiveMs("lease", 30_000) // 30000
 */
export function positiveMs(option: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigurationError(option, `expected a positive integer (ms), got ${String(value)}`);
  }
  return value;
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
 * Reject option names outside `known` (a typo would otherwise silently use a default).
 *
 * @throws {ConfigurationError} naming the unknown option, or `options` for a non-object
 * @example
 * checkKnown(options, new Set(["lease", "retention"]), "once");
 */
export function checkKnown(options: unknown, known: ReadonlySet<string>, of: string): void {
  if (typeof options !== "object" || options === null) {
    throw new ConfigurationError("options", "expected an object");
  }
  for (const name of Object.keys(options)) {
    if (!known.has(name)) throw new ConfigurationError(name, `unknown option of ${of}`);
  }
}
