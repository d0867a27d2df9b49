import type { Budget } from "../budget/budget";
import { ConfigurationError } from "../errors";
import type { Locks } from "../lock/types";
import { checkKnown, isLocks, optionalMs } from "../validate";

/** Headers kept with a stored response unless `headers` says otherwise (never `set-cookie`). */
export const DEFAULT_HEADERS: readonly string[] = [
  "content-type",
  "content-language",
  "content-location",
  "location",
  "etag",
  "last-modified",
  "cache-control",
];

/** Never stored: they carry the first caller's session, not the resource. */
const NEVER = new Set(["set-cookie", "set-cookie2", "authorization", "www-authenticate"]);

/**
 * Options shared by the Hono and Lambda idempotency adapters; `C` is what the adapter's callbacks
 * get (Hono's `Context`, or the Lambda event and context).
 */
export interface IdempotencyOptions<C> {
  /** The lock manager, or a function of the request returning one. */
  readonly locks: Locks | ((c: C) => Locks);
  /** Methods it applies to; others pass through. @default ["POST", "PATCH"] */
  readonly methods?: readonly string[];
  /** Answer 400 to a request without `Idempotency-Key` (else it passes through). @default false */
  readonly required?: boolean;
  /** How long a completed response is kept for replay, ms. @default 86400000 (24 h) */
  readonly ttl?: number;
  /** Lease of the in-progress claim, ms (auto-extended while the handler runs). @default the manager's */
  readonly lease?: number;
  /** How long a duplicate waits for the first request's result before a 409, ms. @default 0 */
  readonly wait?: number;
  /** Largest body kept for replay, bytes; larger ones are "completed without replay". @default 65536 */
  readonly maxBody?: number;
  /** Response headers kept for replay (lower-case). @default {@link DEFAULT_HEADERS} */
  readonly headers?: readonly string[];
  /**
   * Who is asking: keys are scoped by it, so one caller never gets another's stored response.
   * @default a SHA-256 of the `Authorization` and `Cookie` headers
   */
  readonly scope?: (c: C) => string | Promise<string>;
  /**
   * What makes two requests "the same": a retry must match it, or it gets 422.
   * @default a SHA-256 of the method, path (with query) and body
   */
  readonly fingerprint?: (c: C) => string | Promise<string>;
  /** The request's execution budget (sizes the claim's TTL). @default the adapter's platform default */
  readonly budget?: (c: C) => Budget | undefined;
}

/** {@link IdempotencyOptions} validated, with defaults. */
export interface ResolvedIdempotency<C> {
  readonly locks: (c: C) => Locks;
  readonly methods: ReadonlySet<string>;
  readonly required: boolean;
  readonly ttl: number;
  readonly lease: number | undefined;
  readonly wait: number;
  readonly maxBody: number;
  readonly headers: ReadonlySet<string>;
  readonly scope: ((c: C) => string | Promise<string>) | undefined;
  readonly fingerprint: ((c: C) => string | Promise<string>) | undefined;
  readonly budget: ((c: C) => Budget | undefined) | undefined;
}

const KNOWN = new Set([
  "locks",
  "methods",
  "required",
  "ttl",
  "lease",
  "wait",
  "maxBody",
  "headers",
  "scope",
  "fingerprint",
  "budget",
]);

function fn<T>(name: string, value: T | undefined): T | undefined {
  if (value !== undefined && typeof value !== "function") {
    throw new ConfigurationError(name, "expected a function");
  }
  return value;
}

function bytes(option: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new ConfigurationError(option, `expected an integer >= 0 (bytes), got ${String(value)}`);
  }
  return value;
}

function names(option: string, value: unknown, fallback: readonly string[]): string[] {
  if (value === undefined) return [...fallback];
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string" && v !== "")) {
    throw new ConfigurationError(option, "expected an array of non-empty strings");
  }
  return value;
}

/**
 * Validate the options of an idempotency adapter (`of` names it in errors).
 *
 * @throws {ConfigurationError} naming the option
 * @example
 * const resolved = resolveIdempotency({ locks, ttl: 3_600_000 }, "idempotency");
 */
export function resolveIdempotency<C>(
  options: IdempotencyOptions<C>,
  of: string,
): ResolvedIdempotency<C> {
  if (typeof options !== "object" || options === null) {
    throw new ConfigurationError("options", `${of}() expects an options object { locks }`);
  }
  checkKnown(options, KNOWN, of);
  const { locks } = options;
  if (typeof locks !== "function" && !isLocks(locks)) {
    throw new ConfigurationError("locks", "expected createLocks(...) or a function returning it");
  }
  if (options.required !== undefined && typeof options.required !== "boolean") {
    throw new ConfigurationError("required", "expected a boolean");
  }
  const headers = names("headers", options.headers, DEFAULT_HEADERS).map((h) => h.toLowerCase());
  const forbidden = headers.find((h) => NEVER.has(h));
  if (forbidden !== undefined) {
    throw new ConfigurationError(
      "headers",
      `"${forbidden}" is never stored (it belongs to the first caller)`,
    );
  }
  const methods = names("methods", options.methods, ["POST", "PATCH"]).map((m) => m.toUpperCase());
  return {
    locks: typeof locks === "function" ? locks : () => locks,
    methods: new Set(methods),
    required: options.required ?? false,
    ttl: optionalMs("ttl", options.ttl, 1) ?? 86_400_000,
    lease: optionalMs("lease", options.lease, 1),
    wait: optionalMs("wait", options.wait, 0) ?? 0,
    maxBody: bytes("maxBody", options.maxBody) ?? 65_536,
    headers: new Set(headers),
    scope: fn("scope", options.scope),
    fingerprint: fn("fingerprint", options.fingerprint),
    budget: fn("budget", options.budget),
  };
}
