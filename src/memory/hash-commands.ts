/**
 * The hash commands of a memory node's keyspace, as Redis 7.0 runs them: HSET, HGET, HDEL, HLEN,
 * HEXISTS and HGETALL. The keyspace owns the key (its type, its expiry, deleting it once emptied);
 * this file only reads and changes a hash's fields.
 *
 * Field order (HGETALL): insertion order, an update keeping the field's place, as Redis keeps a
 * small hash (a listpack). Redis turns a hash into a hash table once it has more than 128 fields or
 * one field or value longer than 64 bytes (`hash-max-listpack-entries` / `-value`), and never back;
 * its HGETALL order is then the table's, seeded at random per process, which no memory node can
 * reproduce: a script must not depend on the order of such a hash's fields.
 *
 * @module
 */

import type { ErrorReply, Reply, TypedKey } from "./command-options";

/** A hash's fields and values, in insertion order. */
export type Fields = Map<string, string>;

/** The hash commands a memory node runs (upper case). */
export const HASH_COMMANDS: ReadonlySet<string> = new Set([
  "HSET",
  "HGET",
  "HDEL",
  "HLEN",
  "HEXISTS",
  "HGETALL",
]);

const HSET_ARITY: ErrorReply = { err: "ERR wrong number of arguments for 'hset' command" };

/**
 * Runs the hash command `name` (one of {@link HASH_COMMANDS}, upper case) with the arguments after
 * its key.
 *
 * @example
 * const key = { read: () => fields, write: (f) => store(f) };
 * hashCommand("HSET", ["a", "1", "b", "2"], key); // 2 (fields added)
 * hashCommand("HGETALL", [], key); // ["a", "1", "b", "2"]
 */
export function hashCommand(name: string, rest: readonly string[], key: TypedKey<Fields>): Reply {
  // HSET counts its arguments (field value pairs) before it looks at the key.
  if (name === "HSET" && (rest.length === 0 || rest.length % 2 !== 0)) return HSET_ARITY;
  const fields = key.read();
  if (fields !== undefined && !(fields instanceof Map)) return fields;
  const field = rest[0] ?? "";
  switch (name) {
    case "HSET": {
      const hash = fields ?? new Map<string, string>();
      let added = 0;
      for (let i = 0; i < rest.length; i += 2) {
        const name = rest[i] as string;
        if (!hash.has(name)) added++;
        hash.set(name, rest[i + 1] as string);
      }
      key.write(hash);
      return added;
    }
    case "HGET":
      return fields?.get(field) ?? null;
    case "HDEL": {
      if (fields === undefined) return 0;
      const removed = rest.filter((name) => fields.delete(name)).length;
      if (removed > 0) key.write(fields);
      return removed;
    }
    case "HLEN":
      return fields?.size ?? 0;
    case "HEXISTS":
      return fields?.has(field) === true ? 1 : 0;
    case "HGETALL":
      return fields === undefined ? [] : [...fields].flat();
    default:
      throw new Error(`unreachable: ${name}`);
  }
}
