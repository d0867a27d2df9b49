/**
 * `cjson.decode`'s reading of JSON text as lua-cjson 2.1 (Redis 7's) reads it, byte by byte: its
 * tokens, its leniency (numbers as C's `strtod` reads them, so `01`, `0x10`, `-inf` and `nan` are
 * numbers; control characters inside strings are kept) and its error texts ("Expected comma or
 * array end but found T_END at character 5"). The value comes back as a tree that `lua-cjson.ts`
 * pushes; `null` as {@link JSON_NULL}.
 *
 * @module
 */

/** JSON's null as decoded (`cjson.null`). */
export const JSON_NULL: object = Object.freeze({ json: null });

/** A decoded value: strings stay bytes. */
export type Decoded = Uint8Array | number | boolean | object | Decoded[] | Map<Uint8Array, Decoded>;

type Token =
  | {
      type:
        | "T_OBJ_BEGIN"
        | "T_OBJ_END"
        | "T_ARR_BEGIN"
        | "T_ARR_END"
        | "T_COLON"
        | "T_COMMA"
        | "T_END";
      index: number;
    }
  | { type: "T_STRING"; index: number; value: Uint8Array }
  | { type: "T_NUMBER"; index: number; value: number }
  | { type: "T_BOOLEAN"; index: number; value: boolean }
  | { type: "T_NULL"; index: number }
  | { type: "T_ERROR"; index: number; value: string };

const SINGLE: Record<number, Token["type"]> = {
  123: "T_OBJ_BEGIN",
  125: "T_OBJ_END",
  91: "T_ARR_BEGIN",
  93: "T_ARR_END",
  58: "T_COLON",
  44: "T_COMMA",
};
const ESCAPES: Record<number, number> = {
  34: 0x22,
  92: 0x5c,
  47: 0x2f,
  98: 8,
  102: 12,
  110: 10,
  114: 13,
  116: 9,
};
const MAX_DEPTH = 1000;
/** What C's strtod reads at the start of a text (decimal, hex, inf, nan). */
const STRTOD =
  /^[+-]?(?:0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?\d+)?|(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|inf(?:inity)?|nan)/i;
/** The characters lua-cjson hands to strtod. */
const NUMBER_CHARS = /[0-9+\-.a-yA-Y]/;

/** An error of the JSON text, with lua-cjson's words. */
export class JsonDecodeError extends Error {}

const ascii = (bytes: Uint8Array, from: number, length: number): string =>
  String.fromCharCode(...bytes.subarray(from, from + length));

function strtod(text: string): { value: number; length: number } | undefined {
  const match = STRTOD.exec(text);
  if (match === null) return undefined;
  const word = match[0];
  const body = word.replace(/^[+-]/, "").toLowerCase();
  const sign = word.startsWith("-") ? -1 : 1;
  if (body.startsWith("inf")) return { value: sign * Infinity, length: word.length };
  if (body.startsWith("nan")) return { value: Number.NaN, length: word.length };
  if (!body.startsWith("0x")) return { value: Number(word), length: word.length };
  const [, digits = "", exp = "0"] = /^0x([0-9a-f.]*)(?:p([+-]?\d+))?$/.exec(body) ?? [];
  const [whole = "", fraction = ""] = digits.split(".");
  const mantissa = [...(whole + fraction)].reduce((n, d) => n * 16 + Number.parseInt(d, 16), 0);
  return { value: sign * mantissa * 2 ** (Number(exp) - 4 * fraction.length), length: word.length };
}

class Reader {
  at = 0;
  depth = 0;
  constructor(readonly bytes: Uint8Array) {}

  next(): Token {
    const b = this.bytes;
    while (this.at < b.length && [0x20, 0x09, 0x0a, 0x0d].includes(b[this.at] as number)) this.at++;
    const index = this.at;
    const ch = b[index] ?? 0;
    if (ch === 0) return { type: "T_END", index };
    const single = SINGLE[ch];
    if (single !== undefined) {
      this.at++;
      return { type: single, index } as Token;
    }
    if (ch === 0x22) return this.#string(index);
    // strtod reads from a run of the characters a number may hold, as lua-cjson copies them.
    let end = index;
    while (end < b.length && NUMBER_CHARS.test(String.fromCharCode(b[end] as number))) end++;
    const rest = ascii(b, index, end - index);
    if (ch === 0x2d || (ch >= 0x30 && ch <= 0x39)) return this.#number(index, rest);
    for (const [word, token] of [
      ["true", { type: "T_BOOLEAN", index, value: true }],
      ["false", { type: "T_BOOLEAN", index, value: false }],
      ["null", { type: "T_NULL", index }],
    ] as const) {
      if (rest.startsWith(word)) {
        this.at += word.length;
        return token;
      }
    }
    // What JSON calls invalid numbers, read as numbers by lua-cjson's default (+1, inf, nan).
    if (/^(\+|inf|nan)/i.test(rest)) return this.#number(index, rest);
    return { type: "T_ERROR", index, value: "invalid token" };
  }

  #number(index: number, rest: string): Token {
    const read = strtod(rest);
    if (read === undefined) return { type: "T_ERROR", index, value: "invalid number" };
    this.at += read.length;
    return { type: "T_NUMBER", index, value: read.value };
  }

  #string(index: number): Token {
    const b = this.bytes;
    const out: number[] = [];
    this.at++;
    for (;;) {
      const ch = b[this.at] ?? 0;
      if (ch === 0x22) break;
      const error = (value: string): Token => ({ type: "T_ERROR", index: this.at, value });
      if (ch === 0) return error("unexpected end of string");
      if (ch !== 0x5c) {
        out.push(ch);
        this.at++;
        continue;
      }
      const code = b[this.at + 1] ?? 0;
      if (code === 0x75) {
        const point = this.#unicode();
        if (point === undefined) return error("invalid unicode escape code");
        out.push(...new TextEncoder().encode(String.fromCodePoint(point)));
        continue;
      }
      const escaped = ESCAPES[code];
      if (escaped === undefined) return error("invalid escape code");
      out.push(escaped);
      this.at += 2;
    }
    this.at++;
    return { type: "T_STRING", index, value: Uint8Array.from(out) };
  }

  /** `\uXXXX` (a surrogate pair as two) at `at`: the code point, `at` moved past it. */
  #unicode(): number | undefined {
    const hex4 = (from: number) => {
      const text = ascii(this.bytes, from, 4);
      return /^[0-9a-fA-F]{4}$/.test(text) ? Number.parseInt(text, 16) : undefined;
    };
    const high = hex4(this.at + 2);
    if (high === undefined || (high >= 0xdc00 && high <= 0xdfff)) return undefined;
    if (high < 0xd800 || high > 0xdbff) {
      this.at += 6;
      return high;
    }
    if (this.bytes[this.at + 6] !== 0x5c || this.bytes[this.at + 7] !== 0x75) return undefined;
    const low = hex4(this.at + 8);
    if (low === undefined || low < 0xdc00 || low > 0xdfff) return undefined;
    this.at += 12;
    return 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00);
  }
}

function fail(expected: string, token: Token): never {
  const found = token.type === "T_ERROR" ? token.value : token.type;
  throw new JsonDecodeError(
    `Expected ${expected} but found ${found} at character ${token.index + 1}`,
  );
}

function descend(reader: Reader): void {
  reader.depth++;
  if (reader.depth > MAX_DEPTH) {
    throw new JsonDecodeError(
      `Found too many nested data structures (${reader.depth}) at character ${reader.at}`,
    );
  }
}

function value(reader: Reader, token: Token): Decoded {
  switch (token.type) {
    case "T_STRING":
    case "T_NUMBER":
    case "T_BOOLEAN":
      return token.value;
    case "T_NULL":
      return JSON_NULL;
    case "T_OBJ_BEGIN": {
      descend(reader);
      const object = new Map<Uint8Array, Decoded>();
      let next = reader.next();
      if (next.type === "T_OBJ_END") {
        reader.depth--;
        return object;
      }
      for (;;) {
        if (next.type !== "T_STRING") fail("object key string", next);
        const key = next.value;
        next = reader.next();
        if (next.type !== "T_COLON") fail("colon", next);
        object.set(key, value(reader, reader.next()));
        next = reader.next();
        if (next.type === "T_OBJ_END") break;
        if (next.type !== "T_COMMA") fail("comma or object end", next);
        next = reader.next();
      }
      reader.depth--;
      return object;
    }
    case "T_ARR_BEGIN": {
      descend(reader);
      const array: Decoded[] = [];
      let next = reader.next();
      if (next.type === "T_ARR_END") {
        reader.depth--;
        return array;
      }
      for (;;) {
        array.push(value(reader, next));
        next = reader.next();
        if (next.type === "T_ARR_END") break;
        if (next.type !== "T_COMMA") fail("comma or array end", next);
        next = reader.next();
      }
      reader.depth--;
      return array;
    }
    default:
      return fail("value", token);
  }
}

/**
 * Decode `bytes` as lua-cjson does.
 * @throws {JsonDecodeError} with lua-cjson's text
 * @example
 * decodeJson(new TextEncoder().encode("[1,2")); // throws "Expected comma or array end but found T_END at character 5"
 */
export function decodeJson(bytes: Uint8Array): Decoded {
  if (bytes.length >= 2 && (bytes[0] === 0 || bytes[1] === 0)) {
    throw new JsonDecodeError("JSON parser does not support UTF-16 or UTF-32");
  }
  const reader = new Reader(bytes);
  const result = value(reader, reader.next());
  const end = reader.next();
  if (end.type !== "T_END") fail("the end", end);
  return result;
}
