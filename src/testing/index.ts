/**
 * `edgelock/testing`: memory nodes for unit tests of code that takes locks. Hand them to
 * `createLocks({ nodes })` (or any adapter's `nodes`) and your handlers run against edgelock's
 * real scripts in-process, with no Redis server, no network and nothing else to install; a
 * {@link manualClock} makes a lock's key expire when the test says so. Runs on Node, Bun, Deno
 * and inside workerd (Miniflare, the vitest workers pool). See docs/TESTING-HANDLERS.md.
 *
 * @example
 * import { createLocks } from "edgelock";
 * import { manualClock, memoryNodes } from "edgelock/testing";
 *
 * const clock = manualClock();
 * const nodes = memoryNodes(3, { clock });
 * const locks = createLocks({ nodes });
 *
 * @module
 */
export {
  type Clock,
  type ManualClock,
  MemoryNode,
  MemoryNodeError,
  type MemoryNodeOptions,
  manualClock,
  memoryNode,
  memoryNodes,
  realClock,
  UnsupportedCommandError,
} from "../memory";
