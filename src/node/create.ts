// The Cloudflare entry of @upstash/redis is plain fetch with no `cache: "no-store"` option (which
// older Workers compatibility dates reject) and no `process`/`Buffer` use, so the same client runs
// on workerd, Node >= 20, Bun and Deno.
import { Redis } from "@upstash/redis/cloudflare";
import { ConfigurationError } from "../errors";
import { RestNode, SignalSlot } from "./node";
import type { NodeCredentials, RedisLike } from "./types";

/** A validated node plus what identifies it for the "same node twice" check. */
export interface BuiltNode {
  readonly node: RestNode;
  /** Normalized REST URL, or `undefined` when a user-supplied client hides it. */
  readonly url: string | undefined;
}

function isRedisLike(value: object): value is RedisLike {
  const v = value as Partial<Record<"eval" | "evalsha", unknown>>;
  return typeof v.eval === "function" && typeof v.evalsha === "function";
}

function isCredentials(value: object): value is NodeCredentials {
  const v = value as Partial<Record<"url" | "token", unknown>>;
  return typeof v.url === "string" && typeof v.token === "string";
}

/**
 * `protocol//host/path` without trailing slash, query or fragment, so `HTTPS://A.io/` and
 * `https://a.io` compare equal.
 */
export function normalizeUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return undefined;
  }
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
}

/** Scripts known per normalized URL, for this isolate / process (a stale entry costs one NOSCRIPT). */
const KNOWN_SCRIPTS = new Map<string, Set<string>>();

function knownScriptsOf(url: string | undefined): Set<string> {
  if (url === undefined) return new Set();
  let known = KNOWN_SCRIPTS.get(url);
  if (known === undefined) {
    known = new Set();
    KNOWN_SCRIPTS.set(url, known);
  }
  return known;
}

function hostOf(normalized: string | undefined, index: number): string {
  return normalized === undefined ? `node${index}` : new URL(normalized).host;
}

/**
 * The REST URL of a user-supplied `@upstash/redis` client. The client keeps it on its (TS-
 * protected) `client.baseUrl`; read defensively, since other `RedisLike`s may not have it.
 */
function urlOfClient(redis: RedisLike): string | undefined {
  const baseUrl = (redis as { client?: { baseUrl?: unknown } }).client?.baseUrl;
  return typeof baseUrl === "string" ? normalizeUrl(baseUrl) : undefined;
}

/**
 * Build the client for one `{ url, token }`: exactly one attempt per request (`retries: 0`; note
 * that `retry: false` still makes two), no auto-pipelining (one command = one request, no
 * batching with unrelated commands), no telemetry headers, no JSON re-parsing of replies, and a
 * per-request `AbortSignal` handed over through `slot`.
 */
function buildClient(credentials: NodeCredentials, url: string, slot: SignalSlot): RedisLike {
  return new Redis({
    url,
    token: credentials.token,
    retry: { retries: 0, backoff: () => 0 },
    enableAutoPipelining: false,
    enableTelemetry: false,
    automaticDeserialization: false,
    signal: slot.take,
  });
}

/**
 * Validate one entry of `nodes` and wrap it.
 *
 * @throws {ConfigurationError} `nodes[i]` is neither a Redis instance nor `{ url, token }`, or has a
 *   bad URL or an empty token (the message never contains the token)
 * @example
 * const { node } = createNode({ url: "https://eu1-x.upstash.io", token }, 0);
 */
export function createNode(input: unknown, index: number): BuiltNode {
  const option = `nodes[${index}]`;
  if (typeof input !== "object" || input === null) {
    throw new ConfigurationError(option, "expected an @upstash/redis Redis or { url, token }");
  }
  if (isRedisLike(input)) {
    const url = urlOfClient(input);
    const node = new RestNode(index, hostOf(url, index), input, undefined, knownScriptsOf(url));
    return { node, url };
  }
  if (!isCredentials(input)) {
    throw new ConfigurationError(
      option,
      "expected an @upstash/redis Redis or { url: string, token: string }",
    );
  }
  const url = normalizeUrl(input.url);
  if (url === undefined) {
    throw new ConfigurationError(`${option}.url`, "expected an http(s) URL");
  }
  if (input.token.trim() === "") {
    throw new ConfigurationError(`${option}.token`, "expected a non-empty token");
  }
  const slot = new SignalSlot();
  const redis = buildClient(input, url, slot);
  return { node: new RestNode(index, hostOf(url, index), redis, slot, knownScriptsOf(url)), url };
}
