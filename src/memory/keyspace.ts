/**
 * The in-memory keyspace of a node: strings and sorted sets with millisecond expiry on the node's
 * clock (each call passes its reading), and the commands edgelock's Lua scripts call (SET and ZADD
 * with the options users' scripts write too, `command-options.ts`), with Redis 7 semantics
 * (a key with deadline `when` is gone once `now > when`; PTTL rounds like Redis's `when - now`).
 * Replies use RESP's shapes: `null` for a nil bulk, `{ ok }` for a status, `{ err }` for an error.
 *
 * @module
 */

import { cFormat } from "./c-format";
import { int64, parseSet, parseZadd } from "./command-options";

type Value =
  | { readonly type: "string"; value: string }
  | { readonly type: "zset"; readonly members: Map<string, number> };

/** A command's reply, as Redis would send it to a script. */
export type Reply = string | number | null | { ok: string } | { err: string } | Reply[];

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
  ["ZADD", -4],
  ["ZREM", -3],
  ["ZCARD", 2],
  ["ZPOPMIN", -2],
  ["ZRANGE", -4],
]);

const ZSET_COMMANDS = new Set(["ZADD", "ZREM", "ZCARD", "ZPOPMIN", "ZRANGE"]);

const WRONGTYPE = { err: "WRONGTYPE Operation against a key holding the wrong kind of value" };
const SYNTAX = { err: "ERR syntax error" };
const NOT_INTEGER = { err: "ERR value is not an integer or out of range" };

const int = (text: string): number | undefined => {
  const value = int64(text);
  return value === undefined ? undefined : Number(value);
};

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INFINITE = /^([+-]?)inf(inity)?$/i;

/** A score as Redis reads a double (strtod over the whole text: no blanks, no "", inf allowed). */
function parseScore(text: string): number | undefined {
  const infinite = INFINITE.exec(text);
  if (infinite !== null) return infinite[1] === "-" ? -Infinity : Infinity;
  return DECIMAL.test(text) ? Number(text) : undefined;
}

/**
 * Redis 7.0's text for a score: C's `%.17g` (`0.1` is `0.10000000000000001`, `1e20` is `1e+20`),
 * `inf`, `-inf`, and `0` for either zero.
 */
export const formatScore = (score: number): string => {
  if (!Number.isFinite(score)) return score > 0 ? "inf" : "-inf";
  if (score === 0) return "0";
  return Number.isInteger(score) && Math.abs(score) < 1e17
    ? String(score)
    : cFormat(score, "g", "", "", "17");
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

  #zset(key: string, now: number): Map<string, number> | undefined | typeof WRONGTYPE {
    const value = this.lookup(key, now);
    if (value === undefined) return undefined;
    return value.type === "zset" ? value.members : WRONGTYPE;
  }

  /** Members of a sorted set in Redis order (score, then member). */
  sorted(key: string, now: number): Array<[string, number]> {
    const members = this.#zset(key, now);
    if (members === undefined || !(members instanceof Map)) return [];
    return [...members].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
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
      default:
        return this.#zcommand(now, name.toUpperCase(), key, rest);
    }
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

  /** ZADD key [NX | XX] [GT | LT] [CH] [INCR] score member …, as Redis 7.0 runs it. */
  #zadd(now: number, key: string, rest: readonly string[]): Reply {
    const options = parseZadd(rest, parseScore);
    if ("err" in options) return options;
    const members = this.#zset(key, now);
    if (members !== undefined && !(members instanceof Map)) return members;
    if (members === undefined && options.xx) return options.incr ? null : 0;
    const set = members ?? new Map<string, number>();
    if (members === undefined) this.#data.set(key, { type: "zset", members: set });
    let added = 0;
    let updated = 0;
    let processed = 0;
    let last = 0;
    for (const [given, member] of options.pairs) {
      const current = set.get(member);
      if (current === undefined) {
        if (options.xx) continue;
        set.set(member, given);
        added++;
        processed++;
        last = given;
        continue;
      }
      if (options.nx) continue;
      const score = options.incr ? current + given : given;
      if (Number.isNaN(score)) return { err: "ERR resulting score is not a number (NaN)" };
      if ((options.lt && score >= current) || (options.gt && score <= current)) continue;
      processed++;
      last = score;
      if (score !== current) {
        set.set(member, score);
        updated++;
      }
    }
    if (options.incr) return processed > 0 ? formatScore(last) : null;
    return options.ch ? added + updated : added;
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

  #zcommand(now: number, name: string, key: string, rest: readonly string[]): Reply {
    if (!ZSET_COMMANDS.has(name))
      return { err: `ERR unknown command '${name}' ${UNKNOWN_COMMAND}` };
    // ZADD reads its scores before it looks at the key's type.
    if (name === "ZADD") return this.#zadd(now, key, rest);
    const members = this.#zset(key, now);
    if (members !== undefined && !(members instanceof Map)) return members;
    switch (name) {
      case "ZREM": {
        if (members === undefined) return 0;
        const removed = rest.filter((m) => members.delete(m)).length;
        if (members.size === 0) this.#delete(key);
        return removed;
      }
      case "ZCARD":
        return members?.size ?? 0;
      case "ZPOPMIN": {
        const [first] = this.sorted(key, now);
        if (first === undefined || members === undefined) return [];
        members.delete(first[0]);
        if (members.size === 0) this.#delete(key);
        return [first[0], formatScore(first[1])];
      }
      case "ZRANGE": {
        // Redis reads the options first (a syntax error), then the bounds.
        const withScores = rest[2]?.toUpperCase() === "WITHSCORES";
        if (rest.length > (withScores ? 3 : 2)) return SYNTAX;
        const [start, stop] = [int(rest[0] ?? ""), int(rest[1] ?? "")];
        if (start === undefined || stop === undefined) return NOT_INTEGER;
        const all = this.sorted(key, now);
        const from = start < 0 ? Math.max(0, all.length + start) : start;
        const to = stop < 0 ? all.length + stop : Math.min(stop, all.length - 1);
        const picked = all.slice(from, to + 1);
        return picked.flatMap(([m, s]) => (withScores ? [m, formatScore(s)] : [m]));
      }
      default:
        throw new Error(`unreachable: ${name}`);
    }
  }
}
