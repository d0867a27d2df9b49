import { ConfigurationError } from "../errors";
import { checkKey } from "../options";

/** Most keys one lock may take (each adds three keys to every script call on every node). */
export const MAX_KEYS = 16;

/** What `acquire`, `tryAcquire` and `using` accept: one key, or several locked together. */
export type LockKey = string | readonly string[];

/**
 * The keys of one lock, checked and in their canonical form: sorted (by UTF-16 code units, the
 * same order in every runtime) and without duplicates, so `["b", "a"]`, `["a", "b", "a"]` and
 * `["a", "b"]` are the same lock. `name` is what errors, events and `lock.key` show: the key
 * itself for one key, the keys joined by `", "` for several.
 */
export interface KeySet {
  readonly name: string;
  readonly keys: readonly string[];
}

/**
 * Check a lock's key or keys. One key as {@link checkKey}; an array needs 1 to {@link MAX_KEYS}
 * distinct keys, each checked the same way (an error names `key[i]`). An array of one key is that
 * key: it conflicts with, and is the same lock as, the plain string.
 *
 * @throws {ConfigurationError} naming `key` or `key[i]`
 * @example
 * checkKeys(["account:2", "account:1", "account:2"], false)
 * // { name: "account:1, account:2", keys: ["account:1", "account:2"] }
 */
export function checkKeys(key: unknown, fencing: boolean): KeySet {
  if (!Array.isArray(key)) {
    const one = checkKey(key, fencing);
    return { name: one, keys: [one] };
  }
  if (key.length === 0) {
    throw new ConfigurationError("key", "expected a non-empty string or a non-empty array of them");
  }
  key.forEach((k: unknown, i) => {
    try {
      checkKey(k, fencing);
    } catch (error) {
      const message = (error as Error).message.replace(/^invalid option `key`: /, "");
      throw new ConfigurationError(`key[${i}]`, message);
    }
  });
  const keys = [...new Set(key as string[])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (keys.length > MAX_KEYS) {
    throw new ConfigurationError(
      "key",
      `${keys.length} distinct keys; one lock takes at most ${MAX_KEYS}`,
    );
  }
  return { name: keys.join(", "), keys };
}
