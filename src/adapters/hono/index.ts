/**
 * `edgelock/hono`: the `lock()`, `limit()` and `idempotency()` middleware for Hono apps (Cloudflare
 * Workers, AWS Lambda through hono's adapter, Node, Bun, Deno).
 *
 * @module
 */

export {
  DEFAULT_SCOPE_COOKIES,
  DEFAULT_SCOPE_HEADERS,
  defaultStore,
  TRANSIENT_STATUSES,
  type UnavailableInfo,
  type UnrecordedAnswer,
} from "../../idempotency";
export {
  type IdempotencyEnv,
  type IdempotencyMiddlewareOptions,
  type IdempotencyVariables,
  idempotency,
} from "./idempotency";
export { type LimitEnv, type LimitOptions, type LimitVariables, limit } from "./limit";
export { type LockEnv, type LockOptions, type LockVariables, lock } from "./middleware";
export { type Problem, retryAfterSeconds } from "./problem";
