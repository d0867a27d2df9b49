/**
 * The `Idempotency-Key` request header. The draft (draft-ietf-httpapi-idempotency-key-header
 * §2.1) makes it an RFC 8941 structured-field String — a quoted string of printable ASCII where
 * `"` and `\` are escaped with `\` — and most clients (Stripe's SDKs and their imitators) send the
 * bare key instead. Both are accepted, each meaning the key it spells: `"abc"` and `abc` are the
 * same key. Either way a key is 1 to 255 printable ASCII characters.
 *
 * @module
 */

/** The header's name. */
export const IDEMPOTENCY_KEY = "Idempotency-Key";

/** Longest key accepted, in characters (after unescaping). */
export const MAX_KEY_LENGTH = 255;

/** What {@link parseKey} found: the key, or why the header is not one. */
export type ParsedKey = { readonly key: string } | { readonly invalid: string };

/**
 * Parse an `Idempotency-Key` header value (surrounding spaces ignored): a value that starts with
 * `"` must be a structured-field String (the draft's form); any other value is the key itself,
 * printable ASCII (spaces inside allowed) without `"`.
 *
 * @example
 * parseKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"') // { key: "8e03978e-…" }
 * parseKey("8e03978e-40d5-43e8-bc93-6894a57f9324")   // { key: "8e03978e-…" }, the same key
 * parseKey("kéy")                                     // { invalid: "only printable ASCII …" }
 */
export function parseKey(value: string): ParsedKey {
  const text = value.trim();
  const key = text.startsWith('"') ? quoted(text) : bare(text);
  if (typeof key !== "string") return key;
  if (key.length === 0) return { invalid: "the key is empty" };
  if (key.length > MAX_KEY_LENGTH) {
    return { invalid: `the key is longer than ${MAX_KEY_LENGTH} characters` };
  }
  return { key };
}

const printable = (code: number) => code >= 0x20 && code <= 0x7e;

/** An unquoted key: the value as sent. A `"` in it is a broken quoted string, not a key. */
function bare(text: string): string | { invalid: string } {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      return { invalid: 'a " in an unquoted key (quote the whole key, escaping " as \\")' };
    }
    if (!printable(code)) return { invalid: "only printable ASCII is allowed in a key" };
  }
  return text;
}

/** A structured-field String, unescaped. */
function quoted(text: string): string | { invalid: string } {
  if (text.length < 2 || !text.endsWith('"')) {
    return { invalid: 'the value starts with " but is not a structured-field string ("<key>")' };
  }
  let key = "";
  for (let i = 1; i < text.length - 1; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x5c) {
      const next = text[i + 1];
      if ((next !== '"' && next !== "\\") || i + 1 === text.length - 1) {
        return { invalid: 'a backslash escapes only " and \\ in a structured-field string' };
      }
      key += next;
      i++;
    } else if (code === 0x22) {
      return { invalid: 'an unescaped " inside the structured-field string' };
    } else if (!printable(code)) {
      return { invalid: "only printable ASCII is allowed in a key" };
    } else {
      key += text[i];
    }
  }
  return key;
}
