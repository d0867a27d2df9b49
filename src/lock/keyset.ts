import { ConfigurationError } from "../errors";

/** Longest accepted key, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1_024;
/** Suffix of the fence counter key (`${prefix}${key}:fence`); reserved when fencing is on. */
export const FENCE_SUFFIX = ":fence";
/**
 * Suffix of the wait room key (`${prefix}${key}:wait`), a sorted set of waiters to wake on release,
 * and of its channel. Reserved: a lock on `x:wait` would read `x`'s room (a sorted set) as its lock
 * key and fail with WRONGTYPE whenever `x` has waiters. (The scripts check a room's type, so they
 * never take a string of that name for a room.)
 */
export const WAIT_SUFFIX = ":wait";

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

const bytes = (s: string): number => new TextEncoder().encode(s).length;

/**
 * Validate a lock key.
 *
 * @throws {ConfigurationError} `option` (by default `key`): empty, not a string, too long, ending
 *   in `:wait` (wait rooms), `:permits` or `:permit:<n>` (a semaphore's keys) or, while fencing
 *   is on, in `:fence` (fence counters)
 * @example
 * checkKey("invoice:42", false) // "invoice:42"
 */
export function checkKey(key: unknown, fencing: boolean, option = "key"): string {
  if (typeof key !== "string" || key.length === 0) {
    throw new ConfigurationError(option, "expected a non-empty string");
  }
  if (bytes(key) > MAX_KEY_BYTES) {
    throw new ConfigurationError(option, `longer than ${MAX_KEY_BYTES} bytes`);
  }
  if (fencing && key.endsWith(FENCE_SUFFIX)) {
    throw new ConfigurationError(option, `must not end with "${FENCE_SUFFIX}" when fencing is on`);
  }
  if (key.endsWith(WAIT_SUFFIX)) {
    throw new ConfigurationError(
      option,
      `must not end with "${WAIT_SUFFIX}" (the name of a key's wait room)`,
    );
  }
  // A semaphore's keys (`S:permit:<j>`, `S:permits:wait`): a lock never shares them (A6).
  if (/:permits$|:permit:\d+$/.test(key)) {
    throw new ConfigurationError(
      option,
      'must not end with ":permits" or ":permit:<n>" (a semaphore\'s keys)',
    );
  }
  return key;
}

/**
 * Check a lock's key or keys. One key as {@link checkKey}; an array needs 1 to {@link MAX_KEYS}
 * distinct keys, each checked the same way (an error names `key[i]`). An array of one key is that
 * key: it conflicts with, and is the same lock as, the plain string.
 *
 * @throws {ConfigurationError} naming `option` (by default `key`) or `key[i]`
 * @example
 * checkKeys(["account:2", "account:1", "account:2"], false)
 * // { name: "account:1, account:2", keys: ["account:1", "account:2"] }
 */
export function checkKeys(key: unknown, fencing: boolean, option = "key"): KeySet {
  if (!Array.isArray(key)) {
    const one = checkKey(key, fencing, option);
    return { name: one, keys: [one] };
  }
  if (key.length === 0) {
    throw new ConfigurationError(
      option,
      "expected a non-empty string or a non-empty array of them",
    );
  }
  key.forEach((k: unknown, i) => {
    checkKey(k, fencing, `${option}[${i}]`);
  });
  const keys = [...new Set(key as string[])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (keys.length > MAX_KEYS) {
    throw new ConfigurationError(
      option,
      `${keys.length} distinct keys; one lock takes at most ${MAX_KEYS}`,
    );
  }
  return { name: keys.join(", "), keys };
}
