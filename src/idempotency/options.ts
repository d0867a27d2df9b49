import type { Budget } from "../budget";
import {
  ConfigurationError,
  checkOptionsWithLocks,
  type NodeOutcome,
  optionalMs,
  shown,
} from "../errors";
import type { Locks } from "../lock";
import { checkLeaseWith, isLocks } from "../lock";
import { DEFAULT_SCOPE_HEADERS, type ScopeRule } from "./digest";
import type { OnUnavailable } from "./unavailable-log";

/**
 * `Retry-After` of a 409 "in progress", ms (sent in whole seconds). The claim's remaining TTL
 * says nothing about when the first request finishes: the claim is auto-extended while it runs
 * (a 10 s lease answers "10 s" to a request that ends in 1 s). A short fixed hint lets a retry
 * find the record soon after it is written; a retry that comes too early costs one more 409.
 */
export const DEFAULT_RETRY_AFTER = 1_000;

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

/**
 * Statuses below 500 that say "not now" rather than "this is the outcome": a retry must run the
 * operation, so they are never kept (by default; see {@link IdempotencyOptions.store}). 408
 * Request Timeout, 409 Conflict (also `lock()`'s busy answer), 425 Too Early, 429 Too Many
 * Requests.
 */
export const TRANSIENT_STATUSES: readonly number[] = [408, 409, 425, 429];

/**
 * The default `store` rule: keep an answer below 500 unless it is one of
 * {@link TRANSIENT_STATUSES}.
 *
 * @example
 * defaultStore(201) // true
 * defaultStore(429) // false
 */
export const defaultStore = (status: number): boolean =>
  status < 500 && !TRANSIENT_STATUSES.includes(status);

/** What `onUnrecorded` gets: the answer that ran but could not be kept. */
export interface UnrecordedAnswer {
  /** The handler's status (the response was sent, or is being streamed). */
  readonly status: number;
  /** Each node's last answer to the record write (no tokens). */
  readonly outcomes: readonly NodeOutcome[];
}

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
  /**
   * Response headers kept for replay (any case; each an HTTP token, e.g. no spaces, else a
   * `ConfigurationError`). @default {@link DEFAULT_HEADERS}
   */
  readonly headers?: readonly string[];
  /**
   * Who is asking: keys are scoped by it, so one caller never gets another's stored response.
   * Replaces the default, and then `scopeHeaders` and `scopeCookies` cannot be set.
   * @default a SHA-256 of the credential headers (`scopeHeaders`) and session cookies
   *   (`scopeCookies`) the request carries; with neither but other cookies, of its whole `Cookie`
   *   header (only while `scopeCookies` is left unset); an `Authorization` signed per request
   *   (SigV4, Digest, HTTP Signatures, HMAC) by its key id or user only; and the request's host
   * @example scope: (c) => c.get("userId")
   */
  readonly scope?: (c: C) => string | Promise<string>;
  /**
   * Request headers that carry the caller's credential, hashed by the default scope (each an
   * HTTP token, else a `ConfigurationError`).
   * @default `DEFAULT_SCOPE_HEADERS`: authorization, x-api-key, api-key, x-auth-token, x-access-token
   * @example scopeHeaders: [...DEFAULT_SCOPE_HEADERS, "x-tenant-key"]
   */
  readonly scopeHeaders?: readonly string[];
  /**
   * Names of the cookies that identify a session, hashed by the default scope; other cookies are
   * ignored. Set it to your session cookie's name (or `[]` when no cookie identifies the caller)
   * and exactly those count.
   * @default `DEFAULT_SCOPE_COOKIES` (common frameworks' session cookies), and a request with
   *   none of them nor a credential header but with cookies is scoped by its whole `Cookie` header
   * @example scopeCookies: ["my_app_session"]
   */
  readonly scopeCookies?: readonly string[];
  /**
   * `Retry-After` of the 409 answered while the first request with the key still runs, ms
   * (sent in whole seconds, rounded up).
   * @default 1000 (see {@link DEFAULT_RETRY_AFTER})
   */
  readonly retryAfter?: number;
  /**
   * Put the lock error's words in a 503's `detail` (which nodes failed and why, by index and
   * host; never a token). Off, clients get a generic `detail`; the nodes' answers still reach the
   * manager's `onEvent` (`acquire` events carry each node's outcome).
   * @default false
   */
  readonly exposeDetails?: boolean;
  /**
   * What makes two requests "the same": a retry must match it, or it gets 422.
   * @default a SHA-256 of the method, path (with query) and body
   */
  readonly fingerprint?: (c: C) => string | Promise<string>;
  /** The request's execution budget (sizes the claim's TTL). @default the adapter's platform default */
  readonly budget?: (c: C) => Budget | undefined;
  /**
   * Which answers are kept for replay, by status: `true` keeps it (a retry gets it replayed),
   * `false` releases the claim (a retry runs the handler again). Only answers below 500 are
   * asked about: a 5xx, a throw and edgelock's own busy/unavailable answers (problem+json of
   * `lock()`) are never kept.
   * @default {@link defaultStore}: every status below 500 except 408, 409, 425 and 429
   * @example store: (status) => status >= 200 && status < 300   // keep successes only
   */
  readonly store?: (status: number) => boolean;
  /**
   * Called when the handler ran to an answer that is kept by `store` but its record could not
   * be written on a majority of nodes (re-sent until the claim's validity or the budget ran out).
   * The response still goes to the client, and the claim is not released: a retry gets 409 (or
   * the record, where a node has it) until the claim's TTL ends, and after that it may run the
   * handler again. Log it, alert, or reconcile. Errors it throws are ignored.
   * @default none
   * @example onUnrecorded: (c, { status }) => console.error("idempotency record lost", status)
   */
  readonly onUnrecorded?: (c: C, answer: UnrecordedAnswer) => void | Promise<void>;
  /**
   * Called when a request is answered 503 because too few lock nodes answered (or the budget
   * could not cover the lookup or the claim), with the route, the claim's key (a hash, never the
   * client's key) and the error. Errors it throws are ignored.
   * @default one `console.error` line: route, key and the cause in words (never a token)
   * @example onUnavailable: (c, { route, error }) => logger.warn({ route, cause: error.message })
   */
  readonly onUnavailable?: OnUnavailable<C>;
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
  /** What the default scope hashes (used when `scope` is unset). */
  readonly scopeRule: ScopeRule;
  readonly retryAfter: number;
  readonly exposeDetails: boolean;
  readonly fingerprint: ((c: C) => string | Promise<string>) | undefined;
  readonly budget: ((c: C) => Budget | undefined) | undefined;
  readonly store: (status: number) => boolean;
  readonly onUnrecorded: ((c: C, answer: UnrecordedAnswer) => void | Promise<void>) | undefined;
  readonly onUnavailable: OnUnavailable<C> | undefined;
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
  "scopeHeaders",
  "scopeCookies",
  "retryAfter",
  "exposeDetails",
  "fingerprint",
  "budget",
  "store",
  "onUnrecorded",
  "onUnavailable",
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
    throw new ConfigurationError(option, `expected an integer >= 0 (bytes), got ${shown(value)}`);
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

/** An HTTP field name: one or more `tchar` (RFC 9110 §5.6.2). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Header names: as {@link names}, each an HTTP token — a name no header can have (`"content-type "`)
 * would match nothing, so a replay would silently lack it, or a scope would not hash it.
 */
function headerNames(option: string, value: unknown, fallback: readonly string[]): string[] {
  const found = names(option, value, fallback);
  const bad = found.find((name) => !TOKEN.test(name));
  if (bad !== undefined) {
    throw new ConfigurationError(option, `${JSON.stringify(bad)} is not an HTTP header name`);
  }
  return found;
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
  checkOptionsWithLocks(options, KNOWN, of);
  const { locks } = options;
  if (typeof locks !== "function" && !isLocks(locks)) {
    throw new ConfigurationError("locks", "expected createLocks(...) or a function returning it");
  }
  if (options.required !== undefined && typeof options.required !== "boolean") {
    throw new ConfigurationError("required", "expected a boolean");
  }
  const headers = headerNames("headers", options.headers, DEFAULT_HEADERS).map((h) =>
    h.toLowerCase(),
  );
  const forbidden = headers.find((h) => NEVER.has(h));
  if (forbidden !== undefined) {
    throw new ConfigurationError(
      "headers",
      `"${forbidden}" is never stored (it belongs to the first caller)`,
    );
  }
  if (options.scope !== undefined) {
    for (const name of ["scopeHeaders", "scopeCookies"] as const) {
      if (options[name] !== undefined) {
        throw new ConfigurationError(
          name,
          "has no effect with `scope` (which replaces the default)",
        );
      }
    }
  }
  if (options.exposeDetails !== undefined && typeof options.exposeDetails !== "boolean") {
    throw new ConfigurationError("exposeDetails", "expected a boolean");
  }
  const scopeHeaders = headerNames("scopeHeaders", options.scopeHeaders, DEFAULT_SCOPE_HEADERS);
  const scopeCookies =
    options.scopeCookies === undefined
      ? undefined
      : names("scopeCookies", options.scopeCookies, []);
  const methods = names("methods", options.methods, ["POST", "PATCH"]).map((m) => m.toUpperCase());
  return {
    locks: typeof locks === "function" ? locks : () => locks,
    methods: new Set(methods),
    required: options.required ?? false,
    ttl: optionalMs("ttl", options.ttl, 1) ?? 86_400_000,
    lease: checkedLease(locks, options.lease),
    wait: optionalMs("wait", options.wait, 0) ?? 0,
    maxBody: bytes("maxBody", options.maxBody) ?? 65_536,
    headers: new Set(headers),
    scope: fn("scope", options.scope),
    scopeRule: { headers: scopeHeaders.map((h) => h.toLowerCase()), cookies: scopeCookies },
    retryAfter: optionalMs("retryAfter", options.retryAfter, 1) ?? DEFAULT_RETRY_AFTER,
    exposeDetails: options.exposeDetails ?? false,
    fingerprint: fn("fingerprint", options.fingerprint),
    budget: fn("budget", options.budget),
    store: fn("store", options.store) ?? defaultStore,
    onUnrecorded: fn("onUnrecorded", options.onUnrecorded),
    onUnavailable: fn("onUnavailable", options.onUnavailable),
  };
}

/** `lease` as `optionalMs` checks it, and against a fixed manager (`checkLeaseWith`). */
function checkedLease(locks: unknown, value: unknown): number | undefined {
  const lease = optionalMs("lease", value, 1);
  checkLeaseWith(locks, lease);
  return lease;
}
