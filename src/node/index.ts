/**
 * One REST node: an `@upstash/redis` client (yours, or one built from `{ url, token }` with lock-
 * suited settings), a per-request timeout, and failures turned into `TransportError`s that name the
 * node by index and host.
 *
 * @module
 */
export { type BuiltNode, createNode, normalizeUrl } from "./create";
export { NODES_VAR, type NodesEnv, nodesFromEnv } from "./env";
export { RestNode } from "./node";
export type { NodeCredentials, NodeInput, RedisLike, SubscriberLike } from "./types";
