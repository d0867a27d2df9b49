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
 * Request headers that carry a caller's credential, hashed by the default scope (lower-case):
 * `Authorization` (Bearer, Basic, SigV4…), `X-API-Key` (API Gateway usage plans and most API-key
 * SaaS), `Api-Key` (Azure API Management, Azure OpenAI), `X-Auth-Token` and `X-Access-Token`
 * (OpenStack, header-based sessions). A header outside this list that tells callers apart goes in
 * `scopeHeaders`.
 */
export const DEFAULT_SCOPE_HEADERS: readonly string[] = [
  "authorization",
  "x-api-key",
  "api-key",
  "x-auth-token",
  "x-access-token",
];

/**
 * Session cookies of common frameworks, hashed by the default scope (matched case-insensitively,
 * also behind a `__Host-` or `__Secure-` prefix): Express `connect.sid`, Java `JSESSIONID`, PHP
 * `PHPSESSID`, ASP.NET `ASP.NET_SessionId`, Django `sessionid`, Laravel `laravel_session`,
 * Auth.js `authjs.session-token` and `next-auth.session-token`, Firebase `__session`, and the
 * plain `session`, `session_id`, `sid`.
 */
export const DEFAULT_SCOPE_COOKIES: readonly string[] = [
  "connect.sid",
  "JSESSIONID",
  "PHPSESSID",
  "ASP.NET_SessionId",
  "sessionid",
  "laravel_session",
  "authjs.session-token",
  "next-auth.session-token",
  "__session",
  "session",
  "session_id",
  "sid",
];

/** Which parts of a request say who is asking (see {@link defaultScope}). */
export interface ScopeRule {
  /** Credential headers, lower-case. */
  readonly headers: readonly string[];
  /** Session cookie names; `undefined`: {@link DEFAULT_SCOPE_COOKIES} with the fallback. */
  readonly cookies: readonly string[] | undefined;
}

const cookieName = (name: string) => name.replace(/^__(Host|Secure)-/i, "").toLowerCase();

/** The `name=value` pairs of a `Cookie` header whose name is in `names`, sorted by name. */
function sessionCookies(cookie: string, names: readonly string[]): string[] {
  const wanted = new Set(names.map(cookieName));
  const found: [string, string][] = [];
  for (const pair of cookie.split(";")) {
    const at = pair.indexOf("=");
    const name = (at < 0 ? pair : pair.slice(0, at)).trim();
    if (name !== "" && wanted.has(cookieName(name))) found.push([name, pair.slice(at + 1).trim()]);
  }
  found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return found.flatMap(([name, value]) => [`cookie:${name}`, value]);
}

/** `name="value"` or `name=value` parameters of an auth scheme, names lower-cased. */
function authParams(text: string): Map<string, string> {
  const params = new Map<string, string>();
  const pattern = /([A-Za-z0-9_*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))/g;
  for (const m of text.matchAll(pattern)) {
    const name = (m[1] as string).toLowerCase();
    if (!params.has(name))
      params.set(name, m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : (m[3] ?? ""));
  }
  return params;
}

/**
 * The stable identity of an `Authorization` value that is signed anew for every request, or
 * `undefined` for any other value (hashed whole). A retry of such a request carries a new
 * signature (and date, nonce), so hashing the whole header would make every retry a new caller:
 * `AWS4-HMAC-SHA256` / `AWS4-ECDSA-P256-SHA256` (SigV4, SigV4a) → the access key id of
 * `Credential=<id>/…`; `Digest` → `username`; `Signature` and `HMAC…` schemes → `keyId` (else
 * `username`). The signature itself is checked by whoever authenticates the request, not here.
 */
export function signerOf(authorization: string): string | undefined {
  const text = authorization.trim();
  const space = text.search(/\s/);
  if (space < 0) return undefined;
  const scheme = text.slice(0, space).toLowerCase();
  const params = authParams(text.slice(space + 1));
  let id: string | undefined;
  if (scheme.startsWith("aws4-")) {
    const credential = params.get("credential");
    id = credential === undefined ? undefined : credential.split("/")[0];
  } else if (scheme === "digest") {
    id = params.get("username");
  } else if (scheme === "signature" || scheme.startsWith("hmac")) {
    id = params.get("keyid") ?? params.get("username");
  }
  return id === undefined || id === "" ? undefined : `${scheme} ${id}`;
}

/**
 * The default scope: who is asking, as the request proves it — a digest of the credential
 * headers in `rule.headers` that are present and of the session cookies in `rule.cookies`; other
 * cookies and headers are ignored, so a changed tracking or load-balancer cookie is the same
 * caller. With the default cookie list (`rule.cookies` undefined) a request that has none of
 * those but does send cookies is scoped by its whole `Cookie` header instead: a session under a
 * cookie name not listed still tells users apart (at the price of a new scope whenever any cookie
 * changes; name it in `scopeCookies` to avoid that). Requests with none of this share one scope.
 * An `Authorization` value signed per request (SigV4, Digest, HTTP Signatures, HMAC) counts by its
 * signer (see {@link signerOf}); `host` (the request's authority), when given, is part of the
 * scope: one host's record is never replayed to another.
 *
 * @example
 * await defaultScope((name) => req.headers.get(name) ?? undefined, { headers: DEFAULT_SCOPE_HEADERS, cookies: undefined })
 */
export function defaultScope(
  header: (name: string) => string | undefined,
  rule: ScopeRule,
  host?: string,
): Promise<string> {
  const parts: string[] = [];
  for (const name of rule.headers) {
    const value = header(name);
    if (value === undefined || value === "") continue;
    const signer = name === "authorization" ? signerOf(value) : undefined;
    if (signer === undefined) parts.push(`header:${name}`, value);
    else parts.push(`signer:${name}`, signer);
  }
  const cookie = header("cookie")?.trim() ?? "";
  if (cookie !== "") {
    const sessions = sessionCookies(cookie, rule.cookies ?? DEFAULT_SCOPE_COOKIES);
    parts.push(...sessions);
    if (parts.length === 0 && rule.cookies === undefined) parts.push("cookies", cookie);
  }
  // Another host is another site (or tenant): a record is never replayed across hosts.
  if (host !== undefined && host !== "") parts.push("host", host.toLowerCase());
  return sha256("scope", ...parts);
}

/**
 * The default fingerprint: method, path (with query) and body. A retry must send the same three;
 * the same key with anything else is a misuse (422).
 */
export const defaultFingerprint = (method: string, path: string, body: Uint8Array) =>
  sha256("request", method.toUpperCase(), path, body);
