/**
 * The check of a `locks` option, shared by `once()`, the adapters and the Idempotency-Key layer
 * (the other option checks are the errors room's: `src/errors/checks.ts`).
 *
 * @module
 */
import { ConfigurationError } from "../errors";
import type { Locks } from "./types";

/** A lock manager from `createLocks` (structurally: it has `acquire`). */
export const isLocks = (value: unknown): value is Locks =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { acquire?: unknown }).acquire === "function";

/**
 * Check a `locks` option that may also be a function returning the manager (adapters build it
 * from per-invocation secrets).
 *
 * @throws {ConfigurationError} option `locks`
 * @example
 * checkLocksOption(options.locks);
 */
export function checkLocksOption(value: unknown): void {
  if (typeof value !== "function" && !isLocks(value)) {
    throw new ConfigurationError(
      "locks",
      "expected the manager from createLocks() or a function returning it",
    );
  }
}
