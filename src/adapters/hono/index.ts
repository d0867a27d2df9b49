/**
 * `edgelock/hono`: the `lock()` middleware for Hono apps (Cloudflare Workers, AWS Lambda through
 * hono's adapter, Node, Bun, Deno).
 *
 * @module
 */
export { type LockEnv, type LockOptions, type LockVariables, lock } from "./middleware";
export { type Problem, retryAfterSeconds } from "./problem";
