/**
 * `edgelock/workers`: helpers for Cloudflare Workers. `nodesFromEnv(env)` turns the Worker's
 * secrets into the `nodes` option of `createLocks`.
 *
 * @module
 */
export { type NodesEnv, nodesFromEnv } from "./nodes";
