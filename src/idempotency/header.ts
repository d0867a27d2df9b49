/**
 * The `Idempotency-Key` request header (draft-ietf-httpapi-idempotency-key-header §2.1): an RFC
 * 8941 structured-field String — a quoted string of printable ASCII where `"` and `\` are escaped
 * with `\` — here of 1 to 255 characters.
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
 * Parse an `Idempotency-Key` header value as an sf-string (surrounding spaces allowed).
 *
 * @example
 * parseKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"') // { key: "8e03978e-…" }
 * parseKey("8e03978e")                               // { invalid: "… not a structured-field string …" }
 */
export function parseKey(value: string): ParsedKey {
  const text = value.trim();
  if (text.length < 2 || !text.startsWith('"') || !text.endsWith('"')) {
    return { invalid: 'the value is not a structured-field string (quote it: "<key>")' };
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
    } else if (code < 0x20 || code > 0x7e) {
      return { invalid: "only printable ASCII is allowed in a structured-field string" };
    } else {
      key += text[i];
    }
  }
  if (key.length === 0) return { invalid: "the key is empty" };
  if (key.length > MAX_KEY_LENGTH) {
    return { invalid: `the key is longer than ${MAX_KEY_LENGTH} characters` };
  }
  return { key };
}
