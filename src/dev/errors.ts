/**
 * Errors thrown by the dev cluster. Kept inside `src/dev` so the Node-only tooling has no dependency
 * on the core library's error set. Messages name the option or the node (index and host), never a
 * token.
 *
 * @module
 */

/**
 * Any failure of the dev cluster: bad options, a redis-server that would not start, a control used
 * on a stopped node.
 *
 * @example
 * ```ts
 * try { await startDevCluster({ nodes: 0 }); } catch (e) { if (e instanceof DevClusterError) … }
 * ```
 */
export class DevClusterError extends Error {
  override name = "DevClusterError";
}

/**
 * No usable `redis-server` binary; the message says how to install one.
 *
 * @example
 * ```ts
 * await startDevCluster().catch((e) => e instanceof RedisServerNotFoundError && console.error(e.message));
 * ```
 */
export class RedisServerNotFoundError extends DevClusterError {
  override name = "RedisServerNotFoundError";

  constructor(binary: string, options?: ErrorOptions) {
    super(
      `redis-server not found (looked for "${binary}"). Install it: \`sudo apt-get install redis-server\` ` +
        "(Debian/Ubuntu), `brew install redis` (macOS), or pass `redisServer: <path>` " +
        "(CLI: put it on PATH). Redis 7.0 or newer is needed.",
      options,
    );
  }
}

/**
 * What a bad options argument is, for a dev cluster error's message: `null`, `number`, `Array`.
 *
 * @example
 * kindOf([]) // "Array"
 */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  return (Object.getPrototypeOf(value) as object | null)?.constructor?.name ?? "object";
}
