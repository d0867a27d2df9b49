import type { Context, Env, MiddlewareHandler } from "hono";
import type { Budget } from "../../budget";
import {
  type BudgetExhaustedError,
  ConfigurationError,
  isBudgetExhaustedError,
  isLockBusyError,
  isQuorumError,
  type LockBusyError,
  type QuorumError,
  shown,
} from "../../errors";
import { type OnUnavailable, reportUnavailable, routeOf } from "../../idempotency";
import type { Lock, Locks } from "../../lock";
import { UNREAD_BODY_MS } from "./body";
import { defaultBudget } from "./context";
import { holdThroughResponse, releaseNow } from "./hold";
import { checkedKey, checkMiddlewareOptions } from "./options";
import { BUSY_RETRY_AFTER, busyResponse, unavailableResponse } from "./problem";
import { markLockAnswer } from "./transient";

/** Variables the middleware sets: `c.var.lock` is the held {@link Lock}. */
export type LockVariables = { lock: Lock };

/** The middleware's Hono env: the caller's env (if typed) plus {@link LockVariables}. */
export type LockEnv<E extends Env> = 0 extends 1 & E
  ? { Variables: LockVariables }
  : E & { Variables: LockVariables };

/** Options of {@link lock}. Validated when the middleware is built. */
// biome-ignore lint/suspicious/noExplicitAny: as hono's createMiddleware: untyped apps get `any` env
export interface LockOptions<E extends Env = any, P extends string = any> {
  /**
   * The lock manager, or a function of the context returning one (Worker secrets arrive with each
   * request). The function runs on every request: cache the result per `c.env`, do not build a
   * new `createLocks` each time.
   */
  readonly locks: Locks | ((c: Context<E, P>) => Locks);
  /**
   * The lock key of this request, e.g. `(c) => c.req.param("id")`. It may return `undefined`
   * (hono types a route parameter as `string | undefined` unless the middleware is given the
   * path, `lock<Env, "/invoices/:id">(…)`): a key that is not a non-empty string at run time is a
   * `ConfigurationError` naming `key` (a 500), never a lock on `"undefined"`. With a prefix, keep
   * the check: `` (c) => c.req.param("id") && `invoice:${c.req.param("id")}` `` — a template
   * literal alone would turn a missing parameter into `"invoice:undefined"`.
   *
   * An array locks several keys at once (all or none, order-independent, as `locks.acquire`):
   * `(c) => [`account:${c.req.param("from")}`, `account:${c.req.param("to")}`]`; every element is
   * checked the same way.
   */
  readonly key: (c: Context<E, P>) => LockKeyOf | undefined | Promise<LockKeyOf | undefined>;
  /** Lease in ms (default: the `createLocks` lease). */
  readonly lease?: number;
  /** How long to wait for a busy lock before answering 409, in ms (default: the `createLocks` wait). */
  readonly wait?: number;
  /**
   * Require a fence token. Fencing is a property of the lock manager (`createLocks({ fencing })`),
   * so this cannot switch it on; with `true` a request whose lock has no fence fails with a
   * `ConfigurationError` (option `fencing`, a 500 through `app.onError`) instead of running the
   * handler without `c.var.lock.fence`.
   * @default false
   */
  readonly fencing?: boolean;
  /**
   * The request's execution budget (`undefined`: none). Default: `budget.lambda(lambdaContext)` on
   * Hono's AWS Lambda adapter, `budget.workersFetch()` when there is an execution context
   * (Workers), otherwise none (the TTL is the lease; auto-extension covers long handlers).
   */
  readonly budget?: (c: Context<E, P>) => Budget | undefined;
  /**
   * `Retry-After` of the default busy answer, ms (sent in whole seconds, rounded up). Not the
   * holder's TTL, which auto-extension keeps renewing: a short hint the client can act on.
   * @default 1000
   */
  readonly retryAfter?: number;
  /**
   * Put the error's words in the default 503's `detail`: which nodes failed and why, by index and
   * host (never a token), or the budget left. Off, clients get a generic `detail`; the per-node
   * answers still reach the manager's `onEvent` and `onError`'s error.
   * @default false
   */
  readonly exposeDetails?: boolean;
  /**
   * How long a streamed body may wait for its first read, in ms. Runtimes start reading a
   * returned response at once; a body nobody reads by then — an outer middleware replaced the
   * response (`c.res = …` after `await next()`), or a test's `app.request()` that never reads it —
   * is cancelled as a client's cancel would be (a stream callback's `onAbort` runs) and the lock
   * released. Raise it only if something outside `lock()` awaits that long before the response
   * goes out.
   * @default 5_000
   */
  readonly unreadBodyTimeout?: number;
  /** Response when the lock is busy. Default: 409 problem+json with `Retry-After: 1`. */
  readonly onBusy?: (c: Context<E, P>, error: LockBusyError) => Response | Promise<Response>;
  /**
   * Response when too few nodes answered (`QuorumError`) or the budget cannot cover the acquire
   * (`BudgetExhaustedError`). Default: 503 problem+json (with `Retry-After` for a quorum failure).
   */
  readonly onError?: (
    c: Context<E, P>,
    error: QuorumError | BudgetExhaustedError,
  ) => Response | Promise<Response>;
  /**
   * Told when the lock could not be decided (too few nodes answered, or the budget could not
   * cover the acquire), before `onError` answers: the route, the key and the error. Errors it
   * throws are ignored. Without it, one `console.error` line names the route, the key and the
   * cause in words (never a token), so a 503 is never silent on the server.
   * @default one `console.error` line
   * @example onUnavailable: (c, { route, error }) => logger.warn({ route, cause: error.message })
   */
  readonly onUnavailable?: OnUnavailable<Context<E, P>>;
}

/** A key, or several locked together, as `key(c)` may return them. */
type LockKeyOf = string | readonly (string | undefined)[];

const KNOWN = new Set([
  "locks",
  "key",
  "lease",
  "wait",
  "fencing",
  "budget",
  "retryAfter",
  "exposeDetails",
  "onBusy",
  "onError",
  "onUnavailable",
  "unreadBodyTimeout",
]);

function validate(options: LockOptions): void {
  checkMiddlewareOptions(
    options as unknown as Record<string, unknown>,
    KNOWN,
    "lock()",
    "{ locks, key }",
  );
  if (typeof options.key !== "function") {
    throw new ConfigurationError("key", "expected a function (c) => string | string[]");
  }
  if (options.fencing !== undefined && typeof options.fencing !== "boolean") {
    throw new ConfigurationError("fencing", `expected a boolean, got ${shown(options.fencing)}`);
  }
}

/**
 * Hono middleware that runs the rest of the chain under a distributed lock.
 *
 * Before `next()` it acquires `key(c)` with auto-extension and sets `c.var.lock`, and it holds the
 * lock for the whole response, body included: a body produced after the handler returned
 * (`stream()`, `streamText()`, `streamSSE()` of `hono/streaming`, any `ReadableStream`) keeps it
 * (auto-extended) until the body has ended — its producer closed it, it errored, or the client
 * cancelled it (disconnected), or nobody started reading it within `unreadBodyTimeout` (an outer
 * middleware replaced the response: the body is cancelled). A response without a body, and a body that is complete when the
 * handler returns (text, JSON, bytes), release right after the handler as before. The release goes
 * through `c.executionCtx.waitUntil` when there is an execution context (Workers: the response is
 * not delayed), and is awaited everywhere else (Lambda freezes after return: a body's end reaches
 * the runtime only once the release has settled). The handler's own errors pass through
 * untouched, and the lock is released all the same.
 *
 * - busy (after `wait`) → `onBusy`, default **409** `application/problem+json` with
 *   `Retry-After: 1` (`retryAfter`; never the holder's TTL, which auto-extension renews);
 * - too few nodes answered → `onError`, default **503** with `Retry-After: 1`;
 * - budget exhausted → `onError`, default **503**;
 * - either of the last two: `onUnavailable(c, { route, key, error })` first, by default one
 *   `console.error` line (route, key, cause; never a token).
 *
 * The default problems' `detail` is generic: node hosts and lock state reach the client only
 * with `exposeDetails: true` (they are in the manager's `onEvent` and the `onError` error).
 *
 * Handlers, and stream callbacks, should honour `c.var.lock.signal`: it aborts (`LockLostError`)
 * shortly before the lock's validity or the budget's deadline runs out, or when the lock is lost,
 * and (`LockEndedError`, `how: "released"`) once the middleware released it. A body that never
 * ends holds the lock as long as auto-extension can: until the budget's deadline (Workers,
 * Lambda), without a budget until the stream ends.
 *
 * @param options.locks - `createLocks(...)`, or `(c) => Locks` (cache per `c.env`)
 * @param options.key - `(c) => string | string[]` (or a Promise of one)
 * @param [options.lease] - lease in ms (default: the `createLocks` lease)
 * @param [options.wait=the createLocks wait] - ms to wait for a busy lock
 * @param [options.fencing=false] - require `c.var.lock.fence` (needs `createLocks({ fencing: true })`)
 * @param [options.budget] - `(c) => Budget`; default from the Lambda context / Workers / none
 * @param [options.retryAfter=1000] - `Retry-After` of the default 409, ms (whole seconds sent)
 * @param [options.exposeDetails=false] - node details in the default 503's `detail`
 * @param [options.unreadBodyTimeout=5_000] - ms a streamed body may wait for its first read
 * @param [options.onBusy] - `(c, LockBusyError) => Response`
 * @param [options.onError] - `(c, QuorumError | BudgetExhaustedError) => Response`
 * @param [options.onUnavailable] - `(c, { route, key, error }) => void`; default: a `console.error` line
 * @returns the middleware; `c.var.lock` is typed through {@link LockVariables}
 * @throws {ConfigurationError} at construction, naming the bad option
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { createLocks, type Locks } from "edgelock";
 * import { lock } from "edgelock/hono";
 * import { nodesFromEnv } from "edgelock/workers";
 *
 * // Secrets arrive with each request: build the lock manager once per env, not per request.
 * const cache = new WeakMap<object, Locks>();
 * const locksFor = (env: Env) => {
 *   let locks = cache.get(env);
 *   if (!locks) cache.set(env, (locks = createLocks({ nodes: nodesFromEnv(env) })));
 *   return locks;
 * };
 *
 * const app = new Hono<{ Bindings: Env }>();
 * app.post(
 *   "/invoices/:id/charge",
 *   lock({ locks: (c) => locksFor(c.env), key: (c) => `invoice:${c.req.param("id")}`, wait: 1_000 }),
 *   async (c) => {
 *     await charge(c.req.param("id"), { signal: c.var.lock.signal });
 *     return c.json({ fence: c.var.lock.fence });
 *   },
 * );
 * ```
 */
// biome-ignore lint/suspicious/noExplicitAny: as hono's createMiddleware: untyped apps get `any` env and path
export function lock<E extends Env = any, P extends string = any>(
  options: LockOptions<E, P>,
): MiddlewareHandler<LockEnv<E>> {
  // Typed for the caller through `E`; inside, any Context will do.
  const opts = options as LockOptions;
  validate(opts);
  const { locks, key, lease, wait, fencing = false, budget } = opts;
  const { retryAfter = BUSY_RETRY_AFTER, exposeDetails = false } = opts;
  const onBusy =
    opts.onBusy ?? ((c: Context, error: LockBusyError) => busyResponse(c, error, retryAfter));
  const onError =
    opts.onError ??
    ((c: Context, error: QuorumError | BudgetExhaustedError) =>
      unavailableResponse(c, error, exposeDetails));
  const unreadBodyTimeout = opts.unreadBodyTimeout ?? UNREAD_BODY_MS;

  const middleware: MiddlewareHandler = async function lock(c, next) {
    const manager = typeof locks === "function" ? locks(c) : locks;
    const lockKey = checkedKey(await key(c));
    const requestBudget = budget === undefined ? defaultBudget(c) : budget(c);
    let held: Lock;
    try {
      held = await manager.acquire(lockKey, {
        autoExtend: true,
        ...(lease === undefined ? {} : { lease }),
        ...(wait === undefined ? {} : { wait }),
        ...(requestBudget === undefined ? {} : { budget: requestBudget }),
      });
    } catch (error) {
      if (isLockBusyError(error)) {
        markLockAnswer(c);
        return onBusy(c, error);
      }
      if (isQuorumError(error) || isBudgetExhaustedError(error)) {
        markLockAnswer(c);
        const route = routeOf(c.req.method, new URL(c.req.url).pathname);
        const info = { route, key: lockKey, error, subject: "lock" } as const;
        await reportUnavailable(opts.onUnavailable, c, info);
        return onError(c, error);
      }
      throw error;
    }
    if (fencing && held.fence === undefined) {
      await releaseNow(c, held);
      throw new ConfigurationError(
        "fencing",
        "the lock has no fence token: create the Locks with createLocks({ fencing: true })",
      );
    }
    c.set("lock", held);
    await holdThroughResponse(c, next, held, unreadBodyTimeout);
  };
  return middleware as MiddlewareHandler<LockEnv<E>>;
}
