/**
 * `edgelock/dev` — Node only. A local cluster of `redis-server` processes, or of in-memory nodes
 * when redis-server is not installed (`backend` option), each behind an Upstash-compatible REST
 * endpoint (the unmodified `@upstash/redis` client works against it), with
 * fault injection per node: latency, error statuses, hangs, connection resets before or after the
 * command ran, NOSCRIPT, pause/resume, kill and restart. The `edgelock dev` CLI is its front.
 *
 * What the endpoint implements (including the SSE `/subscribe` and `/psubscribe` routes and
 * `/publish`) and what it does not (path-style commands in general, `/monitor`, the
 * `allow-key-locking` shebang, the resp2 response format, …) is listed in `endpoint.ts`; the admin
 * routes in `admin.ts`.
 *
 * @example
 * ```ts
 * import { startDevCluster } from "edgelock/dev";
 * const cluster = await startDevCluster({ nodes: 3 });
 * const locks = createLocks({ nodes: cluster.nodes });
 * cluster.controls[2].kill();
 * await cluster.stop();
 * ```
 *
 * @module
 */

export { startDevCluster } from "./cluster";
export { DevClusterError, RedisServerNotFoundError } from "./errors";
export type {
  DevCluster,
  DevClusterOptions,
  DevNode,
  DevNodeConfig,
  Fault,
  NodeStats,
  RestartOptions,
} from "./types";
