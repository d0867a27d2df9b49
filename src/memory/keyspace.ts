/**
 * The in-memory keyspace of a node: strings, hashes and sorted sets with millisecond expiry on the
 * node's clock (each call passes its reading), and the commands edgelock's Lua scripts call, with
 * Redis 7 semantics (a key with deadline `when` is gone once `now > when`; PTTL rounds like
 * Redis's `when - now`). This file owns the keys (their type, expiry, deletion) and runs the
 * commands on any key and on strings (SET with the options users' scripts write too,
 * `command-options.ts`); `hash-commands.ts` and `zset-commands.ts` run those of hashes and sorted
 * sets. Replies use RESP's shapes: `null` for a nil bulk, `{ ok }` for a status, `{ err }` for an
 * error.
 *
 * @module
 */

import { int64, parseSet, type Reply, type TypedKey, WRONGTYPE } from "./command-options";
import { type Fields, HASH_COMMANDS, hashCommand } from "./hash-commands";
import { type Members, sortedMembers, ZSET_COMMANDS, zsetCommand } from "./zset-commands";

export type { Reply } from "./command-options";

type Value =
  | { readonly type: "string"; value: string }
  | { readonly type: "hash"; readonly value: Fields }
  | { readonly type: "zset"; readonly value: Members };

/** What a key of each type the command files change holds. */
interface Contents {
  hash: Fields;
  zset: Members;
}

/** What follows an unknown command's name in its error reply (the memory node recognises it). */
export const UNKNOWN_COMMAND = "(a memory node runs only the commands edgelock's scripts call)";

/**
 * Redis's arity of each command a memory node runs (negative: at least that many words), which
 * `redis.call` checks before running one, as Redis does.
 */
export const ARITY: ReadonlyMap<string, number> = new Map([
  ["GET", 2],
  ["SET", -3],
  ["DEL", -2],
  ["EXISTS", -2],
  ["PEXPIRE", -3],
  ["PTTL", 2],
  ["INCR", 2],
  ["TYPE", 2],
  ["PUBLISH", 3],
  ["TIME", 1],
  ["HSET", -4],
  ["HGET", 3],
  ["HDEL", -3],
  ["HLEN", 2],
  ["HEXISTS", 3],
  ["HGETALL", 2],
  ["ZADD", -4],
  ["ZREM", -3],
  ["ZCARD", 2],
  ["ZPOPMIN", -2],
  ["ZRANGE", -4],
  ["ZSCORE", 3],
]);

const int = (text: string): number | undefined => {
  const value = int64(text);
  return value === undefined ? undefined : Number(value);
};

/**
 * @example
 * const space = new Keyspace();
 * space.command(now, ["SET", "k", "v", "PX", "100"]); // { ok: "OK" }
 */
export class Keyspace {
  readonly #data = new Map<string, Value>();
  readonly #expires = new Map<string, number>();

  /** Drop everything (an empty restart). */
  clear(): void {
    this.#data.clear();
    this.#expires.clear();
  }

  /** The live value of `key` at `now` (expired keys are deleted on access, as Redis does). */
  lookup(key: string, now: number): Value | undefined {
    const when = this.#expires.get(key);
    if (when !== undefined && now > when) {
      this.#data.delete(key);
      this.#expires.delete(key);
      return undefined;
    }
    return this.#data.get(key);
  }

  /** Remaining ms (-2 absent, -1 no expiry). */
  pttl(key: string, now: number): number {
    if (this.lookup(key, now) === undefined) return -2;
    const when = this.#expires.get(key);
    return when === undefined ? -1 : when - now;
  }

  /** Live keys at `now`, sorted. */
  keys(now: number): string[] {
    return [...this.#data.keys()].filter((k) => this.lookup(k, now) !== undefined).sort();
  }

  #delete(key: string): void {
    this.#data.delete(key);
    this.#expires.delete(key);
  }

  /** Members of a sorted set in Redis order (score, then member). */
  sorted(key: string, now: number): Array<[string, number]> {
    const value = this.lookup(key, now);
    return value?.type === "zset" ? sortedMembers(value.value) : [];
  }

  /** Run one command at `now`. */
  command(now: number, argv: readonly string[]): Reply {
    const [name = "", key = "", ...rest] = argv;
    switch (name.toUpperCase()) {
      case "GET": {
        const value = this.lookup(key, now);
        if (value === undefined) return null;
        return value.type === "string" ? value.value : WRONGTYPE;
      }
      case "SET":
        return this.#set(now, key, rest);
      case "DEL":
      case "EXISTS": {
        const found = [key, ...rest].filter((k) => this.lookup(k, now) !== undefined);
        if (name.toUpperCase() === "DEL") for (const k of found) this.#delete(k);
        return found.length;
      }
      case "PEXPIRE":
        return this.#pexpire(now, key, rest);
      case "PTTL":
        return this.pttl(key, now);
      case "INCR":
        return this.#incr(now, key);
      case "TYPE":
        return { ok: this.lookup(key, now)?.type ?? "none" };
      default: {
        const upper = name.toUpperCase();
        if (HASH_COMMANDS.has(upper))
          return hashCommand(upper, rest, this.#typed(key, now, "hash"));
        if (ZSET_COMMANDS.has(upper))
          return zsetCommand(upper, rest, this.#typed(key, now, "zset"));
        return { err: `ERR unknown command '${upper}' ${UNKNOWN_COMMAND}` };
      }
    }
  }

  /** `key` as the commands of `type` see it at `now` (emptied, it is deleted, as Redis does). */
  #typed<T extends keyof Contents>(key: string, now: number, type: T): TypedKey<Contents[T]> {
    return {
      read: () => {
        const value = this.lookup(key, now);
        if (value === undefined) return undefined;
        return value.type === type ? (value.value as Contents[T]) : WRONGTYPE;
      },
      write: (content) => {
        if (content.size === 0) this.#delete(key);
        else this.#data.set(key, { type, value: content } as Value);
      },
    };
  }

  /** PEXPIRE key ms [NX | XX | GT | LT] (a key without expiry counts as never expiring). */
  #pexpire(now: number, key: string, rest: readonly string[]): Reply {
    if (rest.length === 0) return { err: "ERR wrong number of arguments for 'pexpire' command" };
    const ms = int(rest[0] ?? "");
    if (ms === undefined) return { err: "ERR value is not an integer or out of range" };
    const flags = new Set<string>();
    for (const option of rest.slice(1)) {
      const flag = option.toUpperCase();
      if (!["NX", "XX", "GT", "LT"].includes(flag))
        return { err: `ERR Unsupported option ${option}` };
      flags.add(flag);
    }
    if (flags.has("NX") && flags.size > 1) {
      return { err: "ERR NX and XX, GT or LT options at the same time are not compatible" };
    }
    if (flags.has("GT") && flags.has("LT")) {
      return { err: "ERR GT and LT options at the same time are not compatible" };
    }
    if (this.lookup(key, now) === undefined) return 0;
    const current = this.#expires.get(key);
    const when = now + ms;
    if (flags.has("NX") && current !== undefined) return 0;
    if (flags.has("XX") && current === undefined) return 0;
    if (flags.has("GT") && (current === undefined || when <= current)) return 0;
    if (flags.has("LT") && current !== undefined && when >= current) return 0;
    if (ms <= 0) this.#delete(key);
    else this.#expires.set(key, when);
    return 1;
  }

  /** SET key value [NX | XX] [GET] [EX | PX | EXAT | PXAT n | KEEPTTL], as Redis 7.0 runs it. */
  #set(now: number, key: string, rest: readonly string[]): Reply {
    const options = parseSet(rest, now);
    if ("err" in options) return options;
    const old = this.lookup(key, now);
    if (options.get && old !== undefined && old.type !== "string") return WRONGTYPE;
    const previous = options.get ? (old?.type === "string" ? old.value : null) : { ok: "OK" };
    if ((options.nx && old !== undefined) || (options.xx && old === undefined)) {
      return options.get ? previous : null;
    }
    this.#data.set(key, { type: "string", value: options.value });
    if (options.deadline !== undefined) this.#expires.set(key, options.deadline);
    else if (!options.keepTtl) this.#expires.delete(key);
    return previous;
  }

  /** INCR key: the value read as Redis reads a 64-bit integer. */
  #incr(now: number, key: string): Reply {
    const value = this.lookup(key, now);
    if (value !== undefined && value.type !== "string") return WRONGTYPE;
    const current = value === undefined ? 0n : int64(value.value);
    if (current === undefined) return { err: "ERR value is not an integer or out of range" };
    if (current === 2n ** 63n - 1n) return { err: "ERR increment or decrement would overflow" };
    const next = String(current + 1n);
    if (value === undefined) this.#data.set(key, { type: "string", value: next });
    else value.value = next;
    return Number(next);
  }
}
