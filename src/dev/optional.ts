/**
 * The dev cluster's one optional dependency: `ioredis`, the RESP client between each REST
 * endpoint and its redis-server. It is an optional peer dependency of `edgelock`, so a Worker or a
 * Lambda that never runs the dev cluster does not ship it; the cluster's node code (which imports
 * it) is loaded only when a cluster starts, and a missing package gets an install command, not a
 * module-not-found stack.
 *
 * @module
 */
import { DevClusterError } from "./errors";

/** What `startDevCluster` needs from `./node` (which imports ioredis). */
export type NodeModule = typeof import("./node");

/** The message when ioredis is not installed. */
export const IOREDIS_MISSING =
  "edgelock dev needs the optional package ioredis: npm install --save-dev ioredis";

const isMissing = (error: unknown): boolean => {
  const e = error as { code?: unknown; message?: unknown } | null;
  return (
    (e?.code === "ERR_MODULE_NOT_FOUND" || e?.code === "MODULE_NOT_FOUND") &&
    typeof e.message === "string" &&
    e.message.includes("ioredis")
  );
};

/**
 * Load the node module, turning a missing ioredis into a {@link DevClusterError} that says what
 * to install. `load` is injectable for the test.
 *
 * @example
 * const { LocalNode } = await loadNodeModule();
 */
export async function loadNodeModule(
  load: () => Promise<NodeModule> = () => import("./node"),
): Promise<NodeModule> {
  try {
    return await load();
  } catch (error) {
    if (isMissing(error)) throw new DevClusterError(IOREDIS_MISSING, { cause: error });
    throw error;
  }
}
