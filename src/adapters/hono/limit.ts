import type { Context, Env, MiddlewareHandler } from "hono";
import type { Budget } from "../../budget";
import {
  type BudgetExhaustedError,
  ConfigurationError,
  isBudgetExhaustedError,
  isQuorumError,
  isSemaphoreBusyError,
  type QuorumError,
  type SemaphoreBusyError,
} from "../../errors";
import { type OnUnavailable, reportUnavailable, routeOf } from "../../idempotency";
import { isLocks, type Locks } from "../../lock";
import { checkPermits, type Permit, type Semaphore, semaphore } from "../../semaphore";
import { UNREAD_BODY_MS } from "./body";
import { defaultBudget } from "./context";
import { holdThroughResponse } from "./hold";
import { checkedKey, checkMiddlewareOptions } from "./options";
import { BUSY_RETRY_AFTER, capacityResponse, unavailableResponse } from "./problem";
import { markLockAnswer } from "./transient";

/** Variables the middleware sets: `c.var.permit` is the held {@link Permit}. */
export type LimitVariables = { permit: Permit };

/** The middleware's Hono env: the caller's env (if typed) plus {@link LimitVariables}. */
export type LimitEnv<E extends Env> = 0 extends 1 & E
  ? { Variables: LimitVariables }
  : E & { Variables: LimitVariables };

/** Options of {@link limit}. Validated when the middleware is built. */
// biome-ignore lint/suspicious/noExplicitAny: as hono's createMiddleware: untyped apps get `any` env
export interface LimitOptions<E extends Env = any, P extends string = any> {
  /** The lock manager, or a function of the context returning one (cache it per `c.env`). */
  readonly locks: Locks | ((c: Context<E, P>) => Locks);
  /**
   * The semaphore's name: one for the route (`"llm-calls"`), or a function of the request for a
   * limit per tenant, `` (c) => c.req.param("tenant") && `llm:${c.req.param("tenant")}` ``. A
   * result that is not a non-empty string is a `ConfigurationError` naming `key` (a 500).
   */
  readonly key: string | ((c: Context<E, P>) => string | undefined | Promise<string | undefined>);
  /** How many requests run at once, across every instance: an integer from 1 to 64. */
  readonly permits: number;
  /** How long a request waits for a permit before it is answered 429, in ms. @default 0 */
  readonly wait?: number;
  /** Lease in ms (default: the `createLocks` lease); permits are auto-extended. */
  readonly lease?: number;
  /** The request's execution budget; default as `lock()`'s (Lambda context, Workers, none). */
  readonly budget?: (c: Context<E, P>) => Budget | undefined;
  /**
   * `Retry-After` of the default 429, ms (sent in whole seconds, rounded up, at least 1). Not the
   * holders' TTLs, which auto-extension keeps renewing: a short hint the client can act on.
   * @default 1000
   */
  readonly retryAfter?: number;
  /** Put the error's words (nodes, budget) in the default 503's `detail`. @default false */
  readonly exposeDetails?: boolean;
  /** How long a streamed body may wait for its first read, in ms (as `lock()`'s). @default 5_000 */
  readonly unreadBodyTimeout?: number;
  /** Response when every permit stays held. Default: 429 problem+json with `Retry-After`. */
  readonly onBusy?: (c: Context<E, P>, error: SemaphoreBusyError) => Response | Promise<Response>;
  /** Response when too few nodes answered or the budget cannot cover the acquire. Default: 503. */
  readonly onError?: (
    c: Context<E, P>,
    error: QuorumError | BudgetExhaustedError,
  ) => Response | Promise<Response>;
  /** Told before `onError` answers, as `lock()`'s. @default one `console.error` line */
  readonly onUnavailable?: OnUnavailable<Context<E, P>>;
}

const KNOWN = new Set([
  "locks",
  "key",
  "permits",
  "lease",
  "wait",
  "budget",
  "retryAfter",
  "exposeDetails",
  "onBusy",
  "onError",
  "onUnavailable",
  "unreadBodyTimeout",
]);

/**
 * The options checked (`lock()`'s shared checks, then `key` and `permits`), and the semaphore
 * itself when `locks` and `key` are fixed: built once, it checks the key against the manager now.
 */
function validate(options: LimitOptions): Semaphore | undefined {
  checkMiddlewareOptions(
    options as unknown as Record<string, unknown>,
    KNOWN,
    "limit()",
    "{ locks, key, permits }",
  );
  const { locks, key } = options;
  if (typeof key !== "function" && (typeof key !== "string" || key === "")) {
    throw new ConfigurationError("key", "expected a non-empty string or a function (c) => string");
  }
  const permits = checkPermits(options.permits);
  return isLocks(locks) && typeof key === "string" ? semaphore(locks, key, { permits }) : undefined;
}

/**
 * Hono middleware that lets at most `permits` requests run the rest of the chain at once, across
 * every instance of the app: a counting semaphore on the lock nodes (docs/SAFETY.md §4c), one
 * permit per request.
 *
 * It is `lock()` with a semaphore: before `next()` it takes a permit of `key` with
 * auto-extension and sets `c.var.permit`, and it holds the permit for the whole response, a
 * streamed body until it ends (docs/SAFETY.md §6c H1, H2), releasing with every node's answer
 * awaited (or in `waitUntil` on Workers). Its busy and unavailable answers are marked, so an
 * `idempotency()` around it never keeps them, whatever `onBusy` or `onError` answer.
 *
 * - every permit held (after `wait`, default 0) → `onBusy`, default **429**
 *   `application/problem+json` `urn:edgelock:problem:at-capacity` with `Retry-After`
 *   (`retryAfter`, 1 s);
 * - too few nodes answered → `onError`, default **503** with `Retry-After: 1`; budget exhausted →
 *   **503**; either one told to `onUnavailable` first (default: one `console.error` line).
 *
 * @param options.locks - `createLocks(...)`, or `(c) => Locks` (cache per `c.env`)
 * @param options.key - the semaphore's name, or `(c) => string`
 * @param options.permits - requests at once, 1–64
 * @param [options.wait=0] - ms a request waits for a permit
 * @param [options.lease] - lease in ms (default: the `createLocks` lease)
 * @param [options.budget] - `(c) => Budget`; default from the Lambda context / Workers / none
 * @param [options.retryAfter=1000] - `Retry-After` of the default 429, ms (whole seconds sent)
 * @param [options.exposeDetails=false] - node details in the default 503's `detail`
 * @param [options.unreadBodyTimeout=5_000] - ms a streamed body may wait for its first read
 * @param [options.onBusy] - `(c, SemaphoreBusyError) => Response`
 * @param [options.onError] - `(c, QuorumError | BudgetExhaustedError) => Response`
 * @param [options.onUnavailable] - `(c, { route, key, error }) => void`
 * @returns the middleware; `c.var.permit` is typed through {@link LimitVariables}
 * @throws {ConfigurationError} at construction, naming the bad option
 *
 * @example
 * ```ts
 * import { limit } from "edgelock/hono";
 *
 * app.post("/generate", limit({ locks, key: "llm-calls", permits: 3, wait: 2_000 }), async (c) => {
 *   const text = await callTheModel(await c.req.text(), { signal: c.var.permit.signal });
 *   return c.json({ text, slot: c.var.permit.slot });
 * });
 * ```
 */
// biome-ignore lint/suspicious/noExplicitAny: as hono's createMiddleware: untyped apps get `any` env and path
export function limit<E extends Env = any, P extends string = any>(
  options: LimitOptions<E, P>,
): MiddlewareHandler<LimitEnv<E>> {
  // Typed for the caller through `E`; inside, any Context will do.
  const opts = options as LimitOptions;
  const fixed = validate(opts);
  const { locks, key, permits, lease, wait = 0, budget } = opts;
  const { retryAfter = BUSY_RETRY_AFTER, exposeDetails = false } = opts;
  const onBusy =
    opts.onBusy ??
    ((c: Context, error: SemaphoreBusyError) => capacityResponse(c, error, retryAfter));
  const onError =
    opts.onError ??
    ((c: Context, error: QuorumError | BudgetExhaustedError) =>
      unavailableResponse(c, error, exposeDetails, "a permit"));
  const unreadBodyTimeout = opts.unreadBodyTimeout ?? UNREAD_BODY_MS;

  const middleware: MiddlewareHandler = async function limit(c, next) {
    const name = typeof key === "string" ? key : (checkedKey(await key(c), false) as string);
    const limiter =
      fixed ?? semaphore(typeof locks === "function" ? locks(c) : locks, name, { permits });
    const requestBudget = budget === undefined ? defaultBudget(c) : budget(c);
    let permit: Permit;
    try {
      permit = await limiter.acquire({
        autoExtend: true,
        wait,
        ...(lease === undefined ? {} : { lease }),
        ...(requestBudget === undefined ? {} : { budget: requestBudget }),
      });
    } catch (error) {
      if (isSemaphoreBusyError(error)) {
        markLockAnswer(c);
        return onBusy(c, error);
      }
      if (isQuorumError(error) || isBudgetExhaustedError(error)) {
        markLockAnswer(c);
        const route = routeOf(c.req.method, new URL(c.req.url).pathname);
        const info = { route, key: limiter.key, error, subject: "semaphore" } as const;
        await reportUnavailable(opts.onUnavailable, c, info);
        return onError(c, error);
      }
      throw error;
    }
    c.set("permit", permit);
    await holdThroughResponse(c, next, permit, unreadBodyTimeout);
  };
  return middleware as MiddlewareHandler<LimitEnv<E>>;
}
