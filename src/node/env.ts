import { ConfigurationError } from "../errors";
import type { NodeCredentials } from "./types";

/** Name of the variable holding every node as JSON `[{"url","token"}, …]`. */
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

/** One `{ url, token }`; errors name the entry, never echo a value (it may contain a token). */
function credentials(entry: unknown, option: string): NodeCredentials {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    throw new ConfigurationError(option, 'expected an object {"url","token"}');
  }
  const { url, token } = entry as Record<string, unknown>;
  if (typeof url !== "string" || !isHttpUrl(url.trim())) {
    throw new ConfigurationError(`${option}.url`, "expected an http(s) URL string");
  }
  if (typeof token !== "string" || token.trim() === "") {
    throw new ConfigurationError(`${option}.token`, "expected a non-empty string");
  }
  return { url: url.trim(), token: token.trim() };
}

function parseNodes(value: unknown): NodeCredentials[] {
  let list = value;
  if (typeof value === "string") {
    try {
      list = JSON.parse(value);
    } catch {
      // No `cause`: the SyntaxError's message quotes the input, which holds tokens.
      throw new ConfigurationError(NODES_VAR, 'is not valid JSON; expected [{"url","token"}, …]');
    }
  }
  if (!Array.isArray(list) || list.length === 0) {
    throw new ConfigurationError(NODES_VAR, 'expected a non-empty JSON array [{"url","token"}, …]');
  }
  return list.map((entry, index) => credentials(entry, `${NODES_VAR}[${index}]`));
}

/**
 * The `nodes` option of `createLocks` from the environment: a Worker's `env`, or `process.env`
 * on Lambda and Node (any env-like object).
 *
 * - `EDGELOCK_NODES`: a JSON array `[{"url":"https://…","token":"…"}, …]` (a secret, or a
 *   `[vars]` JSON value); it wins when set.
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
    throw new ConfigurationError(
      NODES_VAR,
      `not set: set ${NODES_VAR}, or ${URL_VAR} and ${TOKEN_VAR} for a single node`,
    );
  }
  if (typeof url !== "string" || !isHttpUrl(url.trim())) {
    throw new ConfigurationError(URL_VAR, "expected an http(s) URL");
  }
  if (typeof token !== "string" || token.trim() === "") {
    throw new ConfigurationError(TOKEN_VAR, `expected a non-empty string (set with ${URL_VAR})`);
  }
  return [{ url: url.trim(), token: token.trim() }];
}
