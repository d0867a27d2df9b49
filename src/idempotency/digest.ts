/**
 * SHA-256 digests (WebCrypto, on every runtime) for the caller's scope and the request's
 * fingerprint.
 *
 * @module
 */

const encoder = new TextEncoder();

/** Lower-case hex SHA-256 of `parts`, each length-prefixed (so `["ab","c"]` ≠ `["a","bc"]`). */
export async function sha256(...parts: (string | Uint8Array)[]): Promise<string> {
  const chunks = parts.map((p) => (typeof p === "string" ? encoder.encode(p) : p));
  const total = chunks.reduce((n, c) => n + 8 + c.length, 0);
  const data = new Uint8Array(total);
  const view = new DataView(data.buffer);
  let at = 0;
  for (const chunk of chunks) {
    view.setFloat64(at, chunk.length);
    data.set(chunk, at + 8);
    at += 8 + chunk.length;
  }
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The default scope: who is asking, as the request proves it — a digest of its `Authorization`
 * and `Cookie` headers (absent ones count as empty). Two callers with different credentials never
 * share a key; anonymous requests share one scope.
 *
 * @example
 * await defaultScope(req.headers.get("authorization"), req.headers.get("cookie"))
 */
export const defaultScope = (authorization: string | undefined, cookie: string | undefined) =>
  sha256("scope", authorization ?? "", cookie ?? "");

/**
 * The default fingerprint: method, path (with query) and body. A retry must send the same three;
 * the same key with anything else is a misuse (422).
 */
export const defaultFingerprint = (method: string, path: string, body: Uint8Array) =>
  sha256("request", method.toUpperCase(), path, body);
