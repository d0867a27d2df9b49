/**
 * The memory room's door: an in-process node that runs edgelock's real Lua scripts over a keyspace
 * with Redis 7 expiry semantics (`SimNode`, the simulation's node; `MemoryNode`, the same node as
 * a `RedisLike` for `createLocks`), and the clocks it reads. `edgelock/testing` and the dev
 * cluster's memory backend build on it; the main entry never imports it.
 *
 * @module
 */
export { type Clock, type ManualClock, manualClock, realClock } from "./clock";
export { MemoryNodeError, UnsupportedCommandError } from "./errors";
export { type Reply, UNKNOWN_COMMAND } from "./keyspace";
export {
  MemoryNode,
  type MemoryNodeOptions,
  memoryNode,
  memoryNodes,
} from "./memory-node";
export { type ScriptResult, SimNode, type SimNodeOptions } from "./sim-node";
