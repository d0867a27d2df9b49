/**
 * The options of `SET` and `ZADD` read as Redis 7.0 reads them, Redis's integer parsing
 * (`string2ll`: a 64-bit signed integer written canonically, so `"007"`, `"+5"` and `" 5"` are
 * not integers), a sorted set's score read and written as Redis 7.0 does, and the shapes of replies
 * and of a typed key the command files share. The keyspace applies what these return.
 *
 * @module
 */

import { cFormat } from "./c-format";

/** A command's reply, as Redis would send it to a script. */
export type Reply = string | number | null | { ok: string } | { err: string } | Reply[];

/** An error reply. */
export type ErrorReply = { readonly err: string };

/** WRONGTYPE's reply: a command of one type run on a key of another. */
export const WRONGTYPE: ErrorReply = {
  err: "WRONGTYPE Operation against a key holding the wrong kind of value",
};

/**
 * A key as the commands of its type (hash, sorted set) see it at the command's time; the keyspace
 * owns the key itself (its type, its expiry).
 */
export interface TypedKey<T> {
  /** Its content: `undefined` when the key is absent, {@link WRONGTYPE} when of another type. */
  read(): T | undefined | ErrorReply;
  /** Stores `content` as the key's value (new or changed); emptied, the key is deleted, as in Redis. */
  write(content: T): void;
}

export const SYNTAX: ErrorReply = { err: "ERR syntax error" };
export const NOT_INTEGER: ErrorReply = { err: "ERR value is not an integer or out of range" };
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * `text` as Redis reads an integer (`string2ll`), or undefined.
 *
 * @example
 * int64("9007199254740993"); // 9007199254740993n
 * int64("007"); // undefined
 */
export function int64(text: string): bigint | undefined {
  if (!/^(0|-?[1-9]\d*)$/.test(text) || text.length > 20) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const HEX = /^([+-]?)0[xX]([\da-fA-F]*)(?:\.([\da-fA-F]*))?(?:[pP]([+-]?\d+))?$/;
const INFINITE = /^([+-]?)inf(inity)?$/i;

/** C99's hexadecimal float (`0x1.8p3`), which strtod reads too: at least one digit, `p` optional. */
function hexFloat([, sign, whole = "", fraction = "", exponent = "0"]: RegExpExecArray):
  | number
  | undefined {
  if (whole === "" && fraction === "") return undefined;
  const mantissa = Number(BigInt(`0x${whole}${fraction}`));
  const value = mantissa === 0 ? 0 : mantissa * 2 ** (Number(exponent) - 4 * fraction.length);
  return sign === "-" ? -value : value;
}

/**
 * A score as Redis 7.0 reads a double (`getDoubleFromObject`: strtod over the whole text, so no
 * blanks, no "", `inf` and hexadecimal allowed; refused when it overflows, underflows to zero, or
 * is NaN).
 *
 * @example
 * parseScore("-inf"); // -Infinity
 * parseScore("0x10"); // 16
 * parseScore(" 1"); // undefined
 * parseScore("1e400"); // undefined (ERANGE)
 */
export function parseScore(text: string): number | undefined {
  const infinite = INFINITE.exec(text);
  if (infinite !== null) return infinite[1] === "-" ? -Infinity : Infinity;
  const hex = HEX.exec(text);
  const value = hex !== null ? hexFloat(hex) : DECIMAL.test(text) ? Number(text) : undefined;
  if (value === undefined || !Number.isFinite(value)) return undefined; // overflow: ERANGE
  // Underflow to zero is ERANGE too: a zero comes only from a mantissa of zeros.
  const digits = hex !== null ? `${hex[2]}${hex[3] ?? ""}` : text.replace(/[eE].*$/, "");
  return value === 0 && /[1-9a-fA-F]/.test(digits) ? undefined : value;
}

/**
 * Redis 7.0's text for a score: C's `%.17g` (`0.1` is `0.10000000000000001`, `1e20` is `1e+20`),
 * `inf`, `-inf`, and `0` for either zero. ZRANGE WITHSCORES, ZPOPMIN, ZSCORE and ZADD INCR reply
 * with it.
 *
 * @example
 * formatScore(1 / 3); // "0.33333333333333331"
 */
export const formatScore = (score: number): string => {
  if (!Number.isFinite(score)) return score > 0 ? "inf" : "-inf";
  if (score === 0) return "0";
  return Number.isInteger(score) && Math.abs(score) < 1e17
    ? String(score)
    : cFormat(score, "g", "", "", "17");
};

/** What `SET key value [NX|XX] [GET] [EX|PX|EXAT|PXAT n|KEEPTTL]` asks for. */
export interface SetOptions {
  readonly value: string;
  readonly nx: boolean;
  readonly xx: boolean;
  readonly get: boolean;
  readonly keepTtl: boolean;
  /** The absolute deadline in ms, if an expiry was given. */
  readonly deadline: number | undefined;
}

const EXPIRES = ["EX", "PX", "EXAT", "PXAT"];

/**
 * SET's arguments after the key, at `now` (ms), as Redis 7.0 parses them: each option once in its
 * group (a repeated one is allowed), an expiry > 0 whose deadline fits in 64 bits.
 *
 * @example
 * parseSet(["v", "NX", "PX", "1000"], now); // { value: "v", nx: true, deadline: now + 1000, … }
 */
export function parseSet(rest: readonly string[], now: number): SetOptions | ErrorReply {
  const [value = "", ...options] = rest;
  let nx = false;
  let xx = false;
  let get = false;
  let keepTtl = false;
  let expire: string | undefined;
  let amount = "";
  for (let i = 0; i < options.length; i++) {
    const option = (options[i] as string).toUpperCase();
    const next = options[i + 1];
    if (option === "NX" && !xx) nx = true;
    else if (option === "XX" && !nx) xx = true;
    else if (option === "GET") get = true;
    else if (option === "KEEPTTL" && expire === undefined) keepTtl = true;
    else if (
      EXPIRES.includes(option) &&
      !keepTtl &&
      (expire ?? option) === option &&
      next !== undefined
    ) {
      expire = option;
      amount = next;
      i++;
    } else return SYNTAX;
  }
  if (expire === undefined) return { value, nx, xx, get, keepTtl, deadline: undefined };
  const n = int64(amount);
  if (n === undefined) return NOT_INTEGER;
  const invalid = { err: "ERR invalid expire time in 'set' command" };
  const seconds = expire === "EX" || expire === "EXAT";
  if (n <= 0n || (seconds && n > INT64_MAX / 1000n)) return invalid;
  const ms = seconds ? n * 1000n : n;
  if (expire === "EXAT" || expire === "PXAT")
    return { value, nx, xx, get, keepTtl, deadline: Number(ms) };
  // A virtual clock's `now` may have a fraction: the deadline keeps it, as `SET … PX` always has.
  if (ms > INT64_MAX - BigInt(Math.ceil(now))) return invalid;
  return { value, nx, xx, get, keepTtl, deadline: now + Number(ms) };
}

/** What `ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member …` asks for. */
export interface ZaddOptions {
  readonly nx: boolean;
  readonly xx: boolean;
  readonly gt: boolean;
  readonly lt: boolean;
  readonly ch: boolean;
  readonly incr: boolean;
  readonly pairs: ReadonlyArray<readonly [score: number, member: string]>;
}

/**
 * ZADD's arguments after the key, as Redis 7.0 checks them (options, then pairs, then the
 * options' compatibility, then every score) with `parseScore` reading a score.
 *
 * @example
 * parseZadd(["NX", "1", "a", "2", "b"], parseScore); // { nx: true, pairs: [[1, "a"], [2, "b"]], … }
 */
export function parseZadd(
  rest: readonly string[],
  parseScore: (text: string) => number | undefined,
): ZaddOptions | ErrorReply {
  const flags = new Set<string>();
  let i = 0;
  for (; i < rest.length; i++) {
    const option = (rest[i] as string).toUpperCase();
    if (!["NX", "XX", "GT", "LT", "CH", "INCR"].includes(option)) break;
    flags.add(option);
  }
  const elements = rest.length - i;
  if (elements === 0 || elements % 2 !== 0) return SYNTAX;
  const [nx, xx, gt, lt, ch, incr] = ["NX", "XX", "GT", "LT", "CH", "INCR"].map((f) =>
    flags.has(f),
  ) as [boolean, boolean, boolean, boolean, boolean, boolean];
  if (nx && xx) return { err: "ERR XX and NX options at the same time are not compatible" };
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    return { err: "ERR GT, LT, and/or NX options at the same time are not compatible" };
  }
  if (incr && elements > 2) {
    return { err: "ERR INCR option supports a single increment-element pair" };
  }
  const pairs: Array<[number, string]> = [];
  for (; i < rest.length; i += 2) {
    const score = parseScore(rest[i] as string);
    if (score === undefined) return { err: "ERR value is not a valid float" };
    pairs.push([score, rest[i + 1] as string]);
  }
  return { nx, xx, gt, lt, ch, incr, pairs };
}
