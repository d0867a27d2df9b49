import { ConfigurationError } from "../errors";
import type { NodeCredentials } from "./types";

/**
 * Name of the variable holding every node as JSON: `[{"url","token"}, …]`, or
 * `{"nodes":[{"url","token"}, …]}` (what `edgelock dev` prints first).
 */
export const NODES_VAR = "EDGELOCK_NODES";
const URL_VAR = "UPSTASH_REDIS_REST_URL";
const TOKEN_VAR = "UPSTASH_REDIS_REST_TOKEN";

/**
 * The variables {@link nodesFromEnv} reads. Values are `unknown` because a Worker's `[vars]` may
 * hold parsed JSON while secrets are strings; any Worker `Env` with one of these keys fits.
 */
export interface NodesEnv {
  readonly EDGELOCK_NODES?: unknown;
  readonly UPSTASH_REDIS_REST_URL?: unknown;
  readonly UPSTASH_REDIS_REST_TOKEN?: unknown;
}

/** Unset, or an empty string (a blank line in `.dev.vars`). */
const isUnset = (value: unknown): boolean =>
  value === undefined || value === null || (typeof value === "string" && value.trim() === "");

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === "https:" || protocol === "http:";
  } catch {
    return false;
  }
}

/** The error for a malformed variable: names it (`variable`), never echoes its value. */
const badVariable = (name: string, message: string): ConfigurationError =>
  new ConfigurationError(name, message, { variable: true });

const SHAPES = '[{"url","token"}, …] or {"nodes":[{"url","token"}, …]}';

/** One `{ url, token }`; errors name the entry, never echo a value (it may contain a token). */
function credentials(entry: unknown, option: string): NodeCredentials {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    throw badVariable(option, 'expected an object {"url","token"}');
  }
  const { url, token } = entry as Record<string, unknown>;
  if (typeof url !== "string" || !isHttpUrl(url.trim())) {
    throw badVariable(`${option}.url`, "expected an http(s) URL string");
  }
  if (typeof token !== "string" || token.trim() === "") {
    throw badVariable(`${option}.token`, "expected a non-empty string");
  }
  return { url: url.trim(), token: token.trim() };
}

function parseNodes(value: unknown): NodeCredentials[] {
  let parsed = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      // No `cause`: the SyntaxError's message quotes the input, which holds tokens.
      throw badVariable(NODES_VAR, `is not valid JSON; expected ${SHAPES}`);
    }
  }
  // `{"nodes":[…]}` is the first line `edgelock dev` prints, pasted as it is.
  const list =
    typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && "nodes" in parsed
      ? (parsed as { nodes: unknown }).nodes
      : parsed;
  if (!Array.isArray(list) || list.length === 0) {
    throw badVariable(NODES_VAR, `expected at least one node, as JSON ${SHAPES}`);
  }
  return list.map((entry, index) => credentials(entry, `${NODES_VAR}[${index}]`));
}

/**
 * When the variables are missing from `env` but set in this process's own environment, outside
 * Workers: the caller passed a Workers-style `c.env`, which on `@hono/node-server`, Bun and Deno
 * holds the server's bindings, not the environment. Says so, naming no value.
 */
function notThisEnv(env: NodesEnv): string {
  const processEnv = (globalThis as { process?: { env?: NodesEnv } }).process?.env;
  const onWorkers = (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent;
  if (processEnv === undefined || processEnv === env || onWorkers === "Cloudflare-Workers")
    return "";
  const set = [NODES_VAR, URL_VAR].filter((name) => !isUnset(processEnv[name as keyof NodesEnv]));
  if (set.length === 0) return "";
  return (
    `. ${set[0]} is set in process.env, but the env object given is not process.env: outside` +
    " Cloudflare Workers (Node with @hono/node-server, Bun, Deno) a Hono `c.env` holds the" +
    " server's bindings, not the environment; pass process.env (Deno: Deno.env.toObject())"
  );
}

/**
 * The `nodes` option of `createLocks` from the environment: a Worker's `env`, or `process.env`
 * on Lambda and Node (any env-like object).
 *
 * - `EDGELOCK_NODES`: a JSON array `[{"url":"https://…","token":"…"}, …]`, or the same array as
 *   `{"nodes":[…]}` (the first line `edgelock dev` prints); a secret, or a `[vars]` JSON value.
 *   It wins when set.
 * - Otherwise `UPSTASH_REDIS_REST_URL` + `UPSTASH_REDIS_REST_TOKEN` (the names
 *   `Redis.fromEnv()` reads) as a single node.
 *
 * Empty strings count as unset. Call it once per env (the `locks` of the Hono middleware can cache
 * per `c.env`), not per request.
 *
 * @throws {ConfigurationError} naming the variable (`EDGELOCK_NODES`, `EDGELOCK_NODES[1].url`,
 *   `UPSTASH_REDIS_REST_TOKEN`…) when it is malformed or missing; the message never contains a
 *   token or any part of the JSON
 * @example
 * ```ts
 * import { createLocks, nodesFromEnv } from "edgelock";
 * // Workers: wrangler secret put EDGELOCK_NODES  →  [{"url":"https://eu1-a.upstash.io","token":"…"}, …]
 * const locks = createLocks({ nodes: nodesFromEnv(env) });
 * // Lambda / Node: the same variables in process.env
 * const locks = createLocks({ nodes: nodesFromEnv(process.env) });
 * ```
 */
export function nodesFromEnv(env: NodesEnv): NodeCredentials[] {
  if (typeof env !== "object" || env === null) {
    throw new ConfigurationError("env", "expected an env object (a Worker's env, or process.env)");
  }
  if (!isUnset(env.EDGELOCK_NODES)) return parseNodes(env.EDGELOCK_NODES);
  const url = env.UPSTASH_REDIS_REST_URL;
  const token = env.UPSTASH_REDIS_REST_TOKEN;
  if (isUnset(url) && isUnset(token)) {
    throw badVariable(
      NODES_VAR,
      `not set: set ${NODES_VAR}, or ${URL_VAR} and ${TOKEN_VAR} for a single node${notThisEnv(env)}`,
    );
  }
  if (typeof url !== "string" || !isHttpUrl(url.trim())) {
    throw badVariable(URL_VAR, "expected an http(s) URL");
  }
  if (typeof token !== "string" || token.trim() === "") {
    throw badVariable(TOKEN_VAR, `expected a non-empty string (set with ${URL_VAR})`);
  }
  return [{ url: url.trim(), token: token.trim() }];
}
