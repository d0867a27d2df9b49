/**
 * Redis replies → Upstash REST JSON text.
 *
 * Replies come from ioredis in binary mode with `stringNumbers`: bulk and simple strings are
 * `Buffer`s, integers are decimal strings, nil is `null`, arrays nest, and errors nested in arrays
 * (EXEC, Lua tables) are `Error`s. Because integers arrive as their digits, they are written into the
 * JSON verbatim: a value above 2^53 keeps every digit (a JS `JSON.parse` on the client still rounds
 * it; other languages get it exact).
 *
 * With `Upstash-Encoding: base64` every string at every depth is the base64 of its raw bytes —
 * `"OK"`, `"PONG"`, `"QUEUED"` included, which the client decodes back — and errors are never
 * encoded. Without it, strings are UTF-8 with invalid sequences replaced by U+FFFD, as Upstash does.
 * JSON text is built by concatenation: no intermediate object tree per reply.
 *
 * @module
 */

/** A reply as ioredis returns it in binary mode with `stringNumbers: true`. */
export type RedisReply = Buffer | string | number | null | Error | RedisReply[];

const INTEGER = /^-?\d+$/;

function encodeString(value: Buffer, base64: boolean): string {
  return base64 ? `"${value.toString("base64")}"` : JSON.stringify(value.toString("utf8"));
}

/** JSON text of one reply value (the `X` of `{"result":X}`). */
export function encodeValue(reply: RedisReply, base64: boolean): string {
  if (reply === null || reply === undefined) return "null";
  if (Buffer.isBuffer(reply)) return encodeString(reply, base64);
  if (typeof reply === "string") {
    // Integers come as their digits; anything else is a string some code path produced.
    return INTEGER.test(reply) ? reply : encodeString(Buffer.from(reply, "utf8"), base64);
  }
  if (typeof reply === "number") return Number.isFinite(reply) ? String(reply) : "null";
  if (Array.isArray(reply)) {
    let out = "[";
    for (let i = 0; i < reply.length; i++) {
      if (i > 0) out += ",";
      out += encodeValue(reply[i] as RedisReply, base64);
    }
    return `${out}]`;
  }
  // An error nested below the top level (for example an error table inside a Lua array): Upstash's
  // shape for it is undocumented; it travels as a string so the client's decoder still works.
  return encodeString(Buffer.from(reply.message, "utf8"), base64);
}

/** `{"error":"<message>"}`; the message is never base64-encoded. */
export function encodeError(message: string): string {
  return `{"error":${JSON.stringify(message)}}`;
}

/** `{"result":X}`, or `{"error":…}` when the reply itself is an error. */
export function encodeEntry(reply: RedisReply, base64: boolean): string {
  if (reply instanceof Error) return encodeError(reply.message);
  return `{"result":${encodeValue(reply, base64)}}`;
}

/** `[entry, entry, …]` for `/pipeline` and `/multi-exec`. */
export function encodeEntries(replies: readonly RedisReply[], base64: boolean): string {
  let out = "[";
  for (let i = 0; i < replies.length; i++) {
    if (i > 0) out += ",";
    out += encodeEntry(replies[i] as RedisReply, base64);
  }
  return `${out}]`;
}
