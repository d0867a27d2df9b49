// The Cloudflare entry of @upstash/redis is plain fetch with no `cache: "no-store"` option (which
// older Workers compatibility dates reject) and no `process`/`Buffer` use, so the same client runs
// on workerd, Node >= 20, Bun and Deno.
import { errors, Redis, type Requester } from "@upstash/redis/cloudflare";
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
 * Script calls of a user-supplied `@upstash/redis` client, sent through the client's own HTTP
 * requester so that the reply reaches the script's parser exactly as the node sent it.
 *
 * Why not `redis.eval`/`redis.evalsha`: those run the client's reply deserializer, by default
 * (`automaticDeserialization`) a recursive `JSON.parse` of every string in the reply that keeps
 * what parses. A record `123` comes back a number, `"x"` loses its quotes, `{"a":1}` becomes an
 * object, `null`/`true` stop being strings: the idempotency layer's stored responses (JSON) were
 * all rejected as malformed, so nothing was ever replayed. The damage is lossy (`"x"` and `x`
 * decode alike), so no parser can undo it; a custom `deserialize` option could do anything at
 * all; and making the Lua replies JSON-proof (say, prefixing strings) would only defend against
 * the default deserializer. Changing the user's client (`opts`, `use()` middleware) would change
 * their own commands. The client's default auto-pipelining would also batch our scripts with the
 * app's commands into one `/pipeline` request.
 *
 * So: `Requester.request` is the transport interface `@upstash/redis` exports (its `Redis` is
 * built on one, kept on `client`), and a command is `exec`uted as `request({ body })` followed by
 * the deserializer. We send the very body `EvalCommand`/`EvalshaCommand` build
 * (`[cmd, script, keys.length, ...keys, ...args]`) and stop before the deserializer, which is what
 * `automaticDeserialization: false` does on the client we build for `{ url, token }`. The user's
 * URL, token, retries, response encoding (base64 decoding happens inside `request`), read-your-
 * writes token and telemetry headers all still apply; only the reply decoding is ours. Errors are
 * raised as the client raises them, so they classify the same.
 *
 * A `RedisLike` without a requester (not an `@upstash/redis` client) is used as given: its
 * `eval`/`evalsha` must return replies undecoded (see {@link RedisLike}). Subscriptions (hand-off
 * messages) still go through the user's client: its messages (`<token>|<look>|<gap>|…`) are
 * text that `JSON.parse` never accepts, so they arrive unchanged.
 */
function rawScriptsOf(redis: RedisLike): RedisLike {
  const requester = (redis as { client?: Partial<Requester> }).client;
  if (typeof requester?.request !== "function") return redis;
  const client = requester as Requester;
  const run = async (body: (string | number)[]): Promise<unknown> => {
    const { result, error } = await client.request({ body });
    if (error) throw new errors.UpstashError(error);
    if (result === undefined) throw new TypeError("Request did not return a result");
    return result;
  };
  const raw: RedisLike & { subscribe?: unknown } = {
    eval: (script, keys, args) => run(["eval", script, keys.length, ...keys, ...args]),
    evalsha: (sha1, keys, args) => run(["evalsha", sha1, keys.length, ...keys, ...args]),
  };
  const { subscribe } = redis as { subscribe?: (channel: string) => unknown };
  if (typeof subscribe === "function")
    raw.subscribe = (channel: string) => subscribe.call(redis, channel);
  return raw;
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
    const redis = rawScriptsOf(input);
    const node = new RestNode(index, hostOf(url, index), redis, undefined, knownScriptsOf(url));
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
