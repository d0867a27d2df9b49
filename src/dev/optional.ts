/**
 * The engines of the dev cluster, each loaded only when a cluster of its kind starts:
 *
 * - redis-server's (`redis-engine.ts`) imports `ioredis`, the RESP client between each REST
 *   endpoint and its redis-server. It is an optional peer dependency of `edgelock`, so a Worker or
 *   a Lambda that never runs the dev cluster does not ship it, and a machine without it runs the
 *   in-memory engine instead; asked for explicitly (`backend: "redis"`), a missing package gets an
 *   install command, not a module-not-found stack.
 * - the in-memory one (`memory-engine.ts`) loads the Lua VM; a redis-server cluster never does.
 *
 * @module
 */
import type { BackendKind, StartEngine } from "./engine";
import { DevClusterError } from "./errors";

/** What loading the redis-server engine gives (the module imports ioredis). */
export type NodeModule = { readonly startRedisEngine: StartEngine };

/** The message when ioredis is not installed. */
export const IOREDIS_MISSING =
  "edgelock dev needs the optional package ioredis: npm install --save-dev ioredis";

/** Whether `error` is the failure to import ioredis (not installed). */
export const isIoredisMissing = (error: unknown): boolean => {
  const e = error as { code?: unknown; message?: unknown } | null;
  return (
    (e?.code === "ERR_MODULE_NOT_FOUND" || e?.code === "MODULE_NOT_FOUND") &&
    typeof e.message === "string" &&
    e.message.includes("ioredis")
  );
};

/**
 * Load the redis-server engine, turning a missing ioredis into a {@link DevClusterError} that says
 * what to install. `load` is injectable for the test.
 *
 * @example
 * const { startRedisEngine } = await loadNodeModule();
 */
export async function loadNodeModule(
  load: () => Promise<NodeModule> = () => import("./redis-engine"),
): Promise<NodeModule> {
  try {
    return await load();
  } catch (error) {
    if (isIoredisMissing(error)) throw new DevClusterError(IOREDIS_MISSING, { cause: error });
    throw error;
  }
}

/**
 * The engine starter of `kind`, loaded on first use.
 *
 * @example
 * const start = await loadEngine("memory");
 */
export async function loadEngine(kind: BackendKind): Promise<StartEngine> {
  if (kind === "redis") return (await loadNodeModule()).startRedisEngine;
  return (await import("./memory-engine")).startMemoryEngine;
}

/**
 * Whether ioredis can be imported here (the `"auto"` backend's second condition, after a
 * redis-server on PATH).
 *
 * @example
 * if (await ioredisAvailable()) …
 */
export async function ioredisAvailable(): Promise<boolean> {
  try {
    await loadNodeModule();
    return true;
  } catch (error) {
    if (error instanceof DevClusterError) return false;
    throw error;
  }
}
