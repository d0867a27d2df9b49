import { ConfigurationError, shown } from "../errors";

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
      `expected a positive integer (ms), got ${shown(value)}`,
    );
  }
  return value;
}
