/**
 * The stored response of a completed request, kept in the key's done marker on the nodes (see
 * COMPLETE): the request's fingerprint, status, the allow-listed headers and the body (base64),
 * or only the fingerprint and status when the body was larger than `maxBody` ("completed without
 * replay"). Encoded as JSON of printable ASCII, so nothing between us and Redis can alter it.
 *
 * @module
 */

/** A response as stored and replayed. */
export interface StoredResponse {
  readonly status: number;
  /** Lower-case names, allow-listed (never `set-cookie`). */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Uint8Array;
  /** The first answer was sent base64-encoded (a Lambda `isBase64Encoded` result): replay it so. */
  readonly base64?: boolean;
}

/** A record read back: the response, or `undefined` when it was too large to keep. */
export interface IdempotencyRecord {
  /** SHA-256 (hex) of the first request: method, path and body unless overridden. */
  readonly fingerprint: string;
  readonly status: number;
  readonly response: StoredResponse | undefined;
}

/** Bytes to base64, in chunks (a 64 KiB body would overflow `String.fromCharCode(...all)`). */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * The record to keep for `response` (printable ASCII JSON); with `keepBody` false only its
 * fingerprint and status (the body was too large).
 *
 * @example
 * encodeRecord(fp, { status: 201, headers: [["content-type", "application/json"]], body }, true)
 */
export function encodeRecord(
  fingerprint: string,
  response: StoredResponse,
  keepBody: boolean,
): string {
  const headers = response.headers.map(([name, value]) => [name, value]);
  const record = keepBody
    ? {
        v: 1,
        f: fingerprint,
        s: response.status,
        h: headers,
        b: toBase64(response.body),
        ...(response.base64 === true ? { e: 1 } : {}),
      }
    : { v: 1, f: fingerprint, s: response.status, o: 1 };
  // JSON.stringify escapes control characters; escape the rest of non-ASCII (header values).
  return JSON.stringify(record).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

const isHeader = (h: unknown): h is [string, string] =>
  Array.isArray(h) && h.length === 2 && typeof h[0] === "string" && typeof h[1] === "string";

/**
 * Decode a record read from a node; `undefined` for anything else (an empty record: a marker
 * written without one; a record of another version).
 */
export function decodeRecord(text: string): IdempotencyRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const r = value as Record<string, unknown> | null;
  if (typeof r !== "object" || r === null || r.v !== 1) return undefined;
  if (typeof r.f !== "string" || typeof r.s !== "number") return undefined;
  if (r.o === 1) return { fingerprint: r.f, status: r.s, response: undefined };
  if (!Array.isArray(r.h) || !r.h.every(isHeader) || typeof r.b !== "string") return undefined;
  const response = {
    status: r.s,
    headers: r.h,
    body: fromBase64(r.b),
    ...(r.e === 1 ? { base64: true } : {}),
  };
  return { fingerprint: r.f, status: r.s, response };
}
