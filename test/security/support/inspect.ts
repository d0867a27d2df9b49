/**
 * Helpers of the security tests: every string reachable from a value (errors with their message,
 * stack, `cause` chain, `AggregateError.errors`, outcome objects and own properties), a watcher for
 * unhandled rejections and uncaught exceptions, and a console spy.
 *
 * @module
 */

import { vi } from "vitest";

/**
 * Every string reachable from `value`, walking errors (`message`, `stack`, `name`, `cause`,
 * `errors`), arrays, maps, sets and plain objects (own properties, enumerable or not), with cycle
 * protection. Functions are reported by their source text.
 *
 * @example
 * expect(allStrings(error).join("\n")).not.toContain(token);
 */
export function allStrings(value: unknown, seen = new Set<unknown>()): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") {
    return [String(value)];
  }
  if (typeof value === "function") return [String(value)];
  if (typeof value !== "object" || value === null || seen.has(value)) return [];
  seen.add(value);
  const out: string[] = [];
  if (value instanceof Error) {
    out.push(value.name, value.message, value.stack ?? "");
    out.push(...allStrings(value.cause, seen));
    if (value instanceof AggregateError) out.push(...allStrings(value.errors, seen));
  }
  if (value instanceof Map) {
    for (const [k, v] of value) out.push(...allStrings(k, seen), ...allStrings(v, seen));
  } else if (value instanceof Set) {
    for (const v of value) out.push(...allStrings(v, seen));
  }
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key === "string") out.push(key);
    let property: unknown;
    try {
      property = (value as Record<PropertyKey, unknown>)[key];
    } catch {
      continue;
    }
    out.push(...allStrings(property, seen));
  }
  return out;
}

/** `JSON.stringify` that also serializes errors (message, cause, errors, own properties). */
export function stringifyAll(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v instanceof Error
      ? {
          ...v,
          name: v.name,
          message: v.message,
          cause: v.cause,
          ...(v instanceof AggregateError ? { errors: v.errors } : {}),
        }
      : v,
  );
}

/** Collects unhandled rejections and uncaught exceptions while installed. */
export class CrashWatch {
  readonly problems: unknown[] = [];
  readonly #onProblem = (reason: unknown) => {
    this.problems.push(reason);
  };

  install(): void {
    process.on("unhandledRejection", this.#onProblem);
    process.on("uncaughtException", this.#onProblem);
  }

  uninstall(): void {
    process.off("unhandledRejection", this.#onProblem);
    process.off("uncaughtException", this.#onProblem);
  }
}

/** Spies on every console method; `output()` is everything printed since `install()`. */
export class ConsoleSpy {
  readonly #spies: { mock: { calls: unknown[][] }; mockRestore(): void }[] = [];

  install(): void {
    for (const method of ["log", "info", "warn", "error", "debug", "trace"] as const) {
      this.#spies.push(vi.spyOn(console, method));
    }
  }

  output(): string {
    return this.#spies
      .flatMap((spy) => spy.mock.calls.flatMap((args) => allStrings(args)))
      .join("\n");
  }

  uninstall(): void {
    for (const spy of this.#spies) spy.mockRestore();
    this.#spies.length = 0;
  }
}

/** Let pending promise callbacks and immediate timers run (so late rejections surface). */
export const settle = (ms = 20): Promise<void> => new Promise((r) => setTimeout(r, ms));
