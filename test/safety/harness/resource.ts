/**
 * The protected resource of the safety suite: a separate redis-server (never faulted), reached with
 * ioredis directly, holding per lock key
 *
 * - `res:<key>:counter`, updated with a deliberately NON-atomic read-modify-write (GET, a small
 *   sleep, SET value+1): only mutual exclusion keeps it from losing updates;
 * - `res:<key>:fenced` and `res:<key>:fence`, written only through {@link FENCED_WRITE_LUA}: the
 *   write carries the holder's fence token and the resource rejects it unless the token is newer
 *   than the last one it accepted (Kleppmann's fencing: the storage, not the lock, has the last
 *   word).
 *
 * @module
 */

import { Redis } from "ioredis";
import type { ResourceState } from "./history";

/**
 * Fenced write. KEYS[1] = last accepted fence, KEYS[2] = value; ARGV[1] = fence, ARGV[2] = value.
 * Accepts (returns 1) only a fence strictly greater than the last accepted one, so each grant
 * writes once and a stale holder (lower or equal fence) is rejected (returns 0).
 */
export const FENCED_WRITE_LUA = `
local last = tonumber(redis.call("GET", KEYS[1]) or "0")
local fence = tonumber(ARGV[1])
if fence <= last then
  return 0
end
redis.call("SET", KEYS[1], ARGV[1])
redis.call("SET", KEYS[2], ARGV[2])
return 1
`;

/** Resource keys of one lock key. */
export const resourceKeys = (namespace: string, key: string) => ({
  counter: `${namespace}${key}:counter`,
  fenced: `${namespace}${key}:fenced`,
  fence: `${namespace}${key}:fence`,
});

/** A connection to the protected resource. */
export class ProtectedResource {
  readonly #redis: Redis;
  readonly #namespace: string;

  constructor(redisUrl: string, namespace: string) {
    // No retries, no offline queue: a resource error must surface as "uncertain", never be
    // replayed behind the holder's back.
    this.#redis = new Redis(redisUrl, { maxRetriesPerRequest: 0, enableOfflineQueue: true });
    this.#redis.on("error", () => {});
    this.#namespace = namespace;
  }

  /** GET of the non-atomic counter (0 when absent). */
  async readCounter(key: string): Promise<number> {
    return Number((await this.#redis.get(resourceKeys(this.#namespace, key).counter)) ?? 0);
  }

  /** SET of the non-atomic counter. */
  async writeCounter(key: string, value: number): Promise<void> {
    await this.#redis.set(resourceKeys(this.#namespace, key).counter, String(value));
  }

  /** GET of the fenced counter (0 when absent). */
  async readFenced(key: string): Promise<number> {
    return Number((await this.#redis.get(resourceKeys(this.#namespace, key).fenced)) ?? 0);
  }

  /** The fenced write; `true` when the resource accepted the fence. */
  async writeFenced(key: string, fence: number, value: number): Promise<boolean> {
    const keys = resourceKeys(this.#namespace, key);
    const reply = await this.#redis.eval(
      FENCED_WRITE_LUA,
      2,
      keys.fence,
      keys.fenced,
      String(fence),
      String(value),
    );
    return reply === 1;
  }

  /** Final state of every key, for the checker. */
  async state(keys: readonly string[]): Promise<Record<string, ResourceState>> {
    const result: Record<string, ResourceState> = {};
    for (const key of keys) {
      const k = resourceKeys(this.#namespace, key);
      const [counter, fenced, fence] = await this.#redis.mget(k.counter, k.fenced, k.fence);
      result[key] = {
        counter: Number(counter ?? 0),
        fencedCounter: Number(fenced ?? 0),
        lastFence: Number(fence ?? 0),
      };
    }
    return result;
  }

  close(): void {
    this.#redis.disconnect();
  }
}
