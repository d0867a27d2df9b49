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

/**
 * The default scope: who is asking, as the request proves it — a digest of the credential
 * headers in `rule.headers` that are present and of the session cookies in `rule.cookies`; other
 * cookies and headers are ignored, so a changed tracking or load-balancer cookie is the same
 * caller. With the default cookie list (`rule.cookies` undefined) a request that has none of
 * those but does send cookies is scoped by its whole `Cookie` header instead: a session under a
 * cookie name not listed still tells users apart (at the price of a new scope whenever any cookie
 * changes; name it in `scopeCookies` to avoid that). Requests with none of this share one scope.
 *
 * @example
 * await defaultScope((name) => req.headers.get(name) ?? undefined, { headers: DEFAULT_SCOPE_HEADERS, cookies: undefined })
 */
export function defaultScope(
  header: (name: string) => string | undefined,
  rule: ScopeRule,
): Promise<string> {
  const parts: string[] = [];
  for (const name of rule.headers) {
    const value = header(name);
    if (value !== undefined && value !== "") parts.push(`header:${name}`, value);
  }
  const cookie = header("cookie")?.trim() ?? "";
  if (cookie !== "") {
    const sessions = sessionCookies(cookie, rule.cookies ?? DEFAULT_SCOPE_COOKIES);
    parts.push(...sessions);
    if (parts.length === 0 && rule.cookies === undefined) parts.push("cookies", cookie);
  }
  return sha256("scope", ...parts);
}

/**
 * The default fingerprint: method, path (with query) and body. A retry must send the same three;
 * the same key with anything else is a misuse (422).
 */
export const defaultFingerprint = (method: string, path: string, body: Uint8Array) =>
  sha256("request", method.toUpperCase(), path, body);
