/**
 * The engine of an in-memory dev node (see `engine.ts`): a `MemoryBackend`, no process, no disk.
 * Pause, kill and restart are modelled in process (`memory-backend.ts`); a restart always comes
 * back empty.
 *
 * @module
 */

import type { Engine, StartEngine } from "./engine";
import { MemoryBackend } from "./memory-backend";

/**
 * Starts an in-memory node.
 *
 * @example
 * const engine = await startMemoryEngine(spec, 0);
 */
export const startMemoryEngine: StartEngine = async (_spec, index) => {
  const backend = new MemoryBackend();
  const engine: Engine = {
    kind: "memory",
    name: "the in-memory node",
    backend,
    redisUrl: `memory://node-${index}`,
    pause: () => backend.pause(),
    resume: () => backend.resume(),
    kill: async () => backend.kill(),
    revive: async () => backend.revive(),
    stop: async () => backend.close(),
    killNow: () => backend.close(),
  };
  return engine;
};
