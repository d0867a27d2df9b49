/**
 * The admin routes of a dev node: the same fault and process controls as `DevNode`, over HTTP, for
 * tests in another process (a Worker under `wrangler dev`, a Lambda emulator) and for people with
 * `curl`. They sit on the node's own endpoint and need the node's token like every route; they are
 * neither counted in the stats nor subject to faults.
 *
 * | method and path | body | does |
 * |---|---|---|
 * | `GET /__edgelock/stats` | – | `{"result":{"requests":n,"commands":{"get":n}}}` |
 * | `DELETE /__edgelock/stats` | – | `resetStats()` |
 * | `GET /__edgelock/faults` | – | active faults, `count` = what is left |
 * | `POST /__edgelock/faults` | a `Fault` or an array of them | `inject(…)` each, in order |
 * | `DELETE /__edgelock/faults` | – | `clearFaults()` |
 * | `POST /__edgelock/pause` / `resume` | – | SIGSTOP / SIGCONT the redis-server (memory: hold / run requests) |
 * | `POST /__edgelock/kill` | – | SIGKILL it (memory: drop the node); data routes answer 503 until a restart |
 * | `POST /__edgelock/restart` | optional `{"delayMs":n,"keepData":bool}` | answers once it is back |
 *
 * Success is 200 `{"result":…}`; a bad body 400, an unknown action 404, a wrong method 405, all with
 * `{"error"}`.
 *
 * @example
 * ```sh
 * curl -X POST "$URL/__edgelock/faults" -H "Authorization: Bearer $TOKEN" \
 *   -d '{"kind":"noscript","command":"evalsha","count":3}'
 * ```
 *
 * @module
 */

import { encodeError } from "./encode";
import type { AdminHandler } from "./endpoint";
import { DevClusterError } from "./errors";
import type { DevNode, Fault, RestartOptions } from "./types";

/** What the admin routes drive: a node's controls plus a view of its active faults. */
export interface AdminControls extends DevNode {
  /** Active faults, `count` = what is left of it. */
  listFaults(): Fault[];
}

const OK = JSON.stringify({ result: "OK" });

type Action = (body: unknown) => Promise<unknown> | unknown;

function restartOptions(body: unknown): RestartOptions {
  if (body === undefined) return {};
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new DevClusterError("restart body must be an object {delayMs?, keepData?}");
  }
  const { delayMs, keepData } = body as Record<string, unknown>;
  const options: RestartOptions = {};
  if (delayMs !== undefined) options.delayMs = delayMs as number;
  if (keepData !== undefined) options.keepData = keepData as boolean;
  return options;
}

/** Builds the admin handler of one node. */
export function createAdminHandler(node: AdminControls): AdminHandler {
  const routes: Record<string, Partial<Record<string, Action>>> = {
    stats: { GET: () => node.stats(), DELETE: () => node.resetStats() },
    faults: {
      GET: () => node.listFaults(),
      POST: (body) => {
        for (const fault of Array.isArray(body) ? body : [body]) node.inject(fault);
      },
      DELETE: () => node.clearFaults(),
    },
    pause: { POST: () => node.pause() },
    resume: { POST: () => node.resume() },
    kill: { POST: () => node.kill() },
    restart: { POST: (body) => node.restart(restartOptions(body)) },
  };

  return async (method, action, body) => {
    const route = routes[action];
    if (route === undefined) return [404, encodeError(`ERR unknown admin route: ${action}`)];
    const handler = route[method];
    if (handler === undefined) {
      return [405, encodeError(`ERR method not allowed on /__edgelock/${action}: ${method}`)];
    }
    try {
      const result = await handler(body);
      return [200, result === undefined ? OK : JSON.stringify({ result })];
    } catch (error) {
      if (error instanceof DevClusterError) return [400, encodeError(error.message)];
      throw error;
    }
  };
}
