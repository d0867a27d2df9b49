/**
 * The Upstash-compatible REST endpoint of one dev node: a `node:http` server (HTTP/1.1 keep-alive)
 * in front of one redis-server, implementing the must-haves of Upstash's REST protocol
 * (https://upstash.com/docs/redis/features/restapi; what is and is not implemented:
 * docs/DETAILS.md "The local endpoint"), with the node's faults applied per request.
 *
 * Routes (all need the node's token: `Authorization: Bearer <token>` or `?_token=<token>`, compared
 * in constant time, checked before any Redis work; otherwise 401 `{"error":"Unauthorized"}`):
 * - `POST /` (or `PUT`): one command `["SET","k","v"]` → 200 `{"result":…}`; a Redis error → 400
 *   `{"error":"<verbatim Redis error>"}`.
 * - `POST /pipeline`: `[[…],[…]]` → 200 with exactly one `{"result"}`/`{"error"}` per command, in
 *   order, RESP-pipelined on one shared connection (not atomic).
 * - `POST /multi-exec`: the same, atomically on a dedicated connection; a queue-time error (unknown
 *   command, wrong arity) → 400 `{"error"}` and nothing is written; runtime errors stay inline.
 * - `POST /subscribe/<channel>`, `POST /psubscribe/<pattern>`: Server-Sent Events, one Redis
 *   subscriber connection per stream; `POST /publish/<channel>/<message>` → `{"result":<receivers>}`
 *   (these three also take `GET`; see `subscribe.ts`). Faults and stats see each as one request
 *   with one command (`subscribe`, `psubscribe`, `publish`); `reset-after` resets a stream once
 *   Redis confirmed the subscription.
 * - `/__edgelock/*`: fault and process controls, see `admin.ts`.
 * - `OPTIONS *`: CORS preflight (no token). Unknown path → 404, other method → 405, body over
 *   `maxBodyBytes` → 413 `{"error":"ERR max request size exceeded"}`, redis-server down → 503;
 *   every non-2xx has a JSON `{"error"}` body.
 *
 * Any `Content-Type` is accepted; the body is parsed as JSON regardless. `Upstash-Encoding: base64`
 * base64-encodes every string of the result at every depth (see `encode.ts`). Every reply carries a
 * fresh `upstash-sync-token` (a per-node counter); incoming sync and telemetry headers are ignored.
 *
 * Not implemented (SRH-style list; the official client needs none of it):
 * - path-style commands except `/publish` (`GET /set/foo/bar`, `?EX=100`): unknown paths are 404;
 * - the SSE route `/monitor`;
 * - `Upstash-Response-Format: resp2` (answered with 400) and gzip replies;
 * - the Upstash-only `#!lua flags=allow-key-locking` shebang: redis-server rejects it
 *   (`ERR Unexpected flag in script shebang`), scripts are passed through unaltered;
 * - read-only tokens, `ACL RESTTOKEN`, request quotas, a mount prefix in front of the routes;
 * - Upstash-only commands (`AR*`, `SEARCH.*`, `SCAN … WITHTYPE`) and Upstash's divergences from Redis
 *   (`ZRANGE … LIMIT` without `BYSCORE`/`BYLEX`, `UNLINK` with no key): redis-server answers as Redis;
 * - blocking, subscribe and connection-state commands in a JSON body (`BLPOP`, `SUBSCRIBE`,
 *   `SELECT`, …): 400 (subscriptions go through the SSE routes).
 * Numbers in requests travel as `String(n)`, which equals the JS client's `JSON.stringify` text;
 * integers beyond 2^53 written by another language lose digits in `JSON.parse`.
 *
 * @module
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { presentedToken, TokenCheck } from "./auth";
import { type Backend, BackendUnavailableError } from "./backend";
import { encodeEntries, encodeEntry, encodeError, type RedisReply } from "./encode";
import { DevClusterError } from "./errors";
import { type FaultSet, isEvalsha, NOSCRIPT_MESSAGE } from "./faults";
import { readBody, resetConnection, send, sendPreflight } from "./http";
import {
  BadRequestError,
  type ParsedCommand,
  parseCommand,
  parseCommandList,
  parseJson,
} from "./request";
import type { Stats } from "./stats";
import {
  type PubSubRoute,
  publishCommand,
  pubSubRouteOf,
  SubscriptionStreams,
  subscriptionOf,
} from "./subscribe";
import type { Fault } from "./types";

/** Admin route handler: `[status, JSON body]` for `/__edgelock/<action>`. */
export type AdminHandler = (
  method: string,
  action: string,
  body: unknown,
) => Promise<readonly [number, string]>;

/** What one endpoint needs. */
export interface EndpointOptions {
  /** Names the node in messages: `node <i> (<host>:<port>)`. */
  readonly label: () => string;
  readonly host: string;
  readonly port: number;
  readonly token: string;
  readonly maxBodyBytes: number;
  readonly backend: Backend;
  readonly faults: FaultSet;
  readonly stats: Stats;
  readonly admin: AdminHandler;
}

type Route = "single" | "pipeline" | "multi" | PubSubRoute;

const ADMIN_PREFIX = "/__edgelock/";
const UNAUTHORIZED = encodeError("Unauthorized");
const TOO_LARGE = encodeError("ERR max request size exceeded");
const INJECTED = encodeError("ERR injected fault");
const NOSCRIPT: RedisReply = new Error(NOSCRIPT_MESSAGE);

function routeOf(path: string): Route | undefined {
  if (path === "/" || path === "") return "single";
  if (path === "/pipeline") return "pipeline";
  if (path === "/multi-exec") return "multi";
  return pubSubRouteOf(path);
}

/** Methods of a data route; pub/sub also takes `GET` (`EventSource`, `curl …/publish/ch/msg`). */
function methodsOf(route: Route): readonly string[] {
  return route === "single" || route === "pipeline" || route === "multi"
    ? ["POST", "PUT"]
    : ["GET", "POST", "PUT"];
}

/** One node's REST server. */
export class Endpoint {
  readonly #options: EndpointOptions;
  readonly #tokens: TokenCheck;
  readonly #server: Server;
  readonly #streams: SubscriptionStreams;
  #port = 0;
  #sync = 0;

  private constructor(options: EndpointOptions) {
    this.#options = options;
    this.#tokens = new TokenCheck(options.token);
    this.#streams = new SubscriptionStreams(options.backend);
    this.#server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        this.#send(res, 500, encodeError(`ERR internal error of the dev endpoint: ${message}`));
      });
    });
  }

  /** Starts listening; `port` 0 picks a free one. */
  static listen(options: EndpointOptions): Promise<Endpoint> {
    const endpoint = new Endpoint(options);
    return new Promise((resolve, reject) => {
      endpoint.#server.once("error", (error: NodeJS.ErrnoException) => {
        const where = `${options.label()}: cannot listen on ${options.host}:${options.port}`;
        reject(new DevClusterError(`${where} (${error.code ?? error.message})`, { cause: error }));
      });
      endpoint.#server.listen(options.port, options.host, () => {
        endpoint.#port = (endpoint.#server.address() as AddressInfo).port;
        resolve(endpoint);
      });
    });
  }

  /** The port the server listens on. */
  get port(): number {
    return this.#port;
  }

  /** Stops accepting, and drops every connection, including hung requests and SSE streams. */
  close(): Promise<void> {
    // Before the sockets go: each stream's Redis connection is closed here, not left to the
    // sockets' close events, which may come after the node already killed its redis-server.
    this.#streams.closeAll();
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  #send(res: ServerResponse, status: number, body: string, contentType?: string): void {
    send(res, status, body, String(++this.#sync), contentType);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    const method = req.method ?? "GET";
    if (method === "OPTIONS") return sendPreflight(res);
    const route = routeOf(path);
    if (route !== undefined) this.#options.stats.countRequest();
    const presented = presentedToken(req.headers.authorization, q === -1 ? "" : url.slice(q + 1));
    if (!this.#tokens.accepts(presented)) {
      req.resume();
      return this.#send(res, 401, UNAUTHORIZED);
    }
    if (route === undefined && !path.startsWith(ADMIN_PREFIX)) {
      req.resume();
      return this.#send(res, 404, encodeError(`ERR not found: ${method} ${path}`));
    }
    if (route !== undefined && !methodsOf(route).includes(method)) {
      req.resume();
      res.setHeader("allow", [...methodsOf(route), "OPTIONS"].join(", "));
      return this.#send(res, 405, encodeError(`ERR method not allowed: ${method} ${path}`));
    }
    const body = await readBody(req, this.#options.maxBodyBytes);
    if (body === undefined) return this.#send(res, 413, TOO_LARGE);
    try {
      if (route !== undefined) return await this.#data(route, path, req, res, body);
      const parsed = body.length === 0 ? undefined : parseJson(body);
      const action = path.slice(ADMIN_PREFIX.length);
      const [status, reply] = await this.#options.admin(method, action, parsed);
      return this.#send(res, status, reply);
    } catch (error) {
      if (error instanceof BadRequestError) return this.#send(res, 400, encodeError(error.message));
      if (error instanceof BackendUnavailableError) {
        return this.#send(res, 503, encodeError(`ERR ${this.#options.label()}: ${error.message}`));
      }
      throw error;
    }
  }

  async #data(route: Route, path: string, req: IncomingMessage, res: ServerResponse, body: Buffer) {
    if (route === "subscribe" || route === "psubscribe") {
      return this.#subscribe(subscriptionOf(route, path), req, res);
    }
    const format = header(req, "upstash-response-format");
    if (format !== undefined && format.toLowerCase() !== "json") {
      throw new BadRequestError(`ERR Upstash-Response-Format "${format}" is not supported here`);
    }
    const base64 = header(req, "upstash-encoding")?.toLowerCase() === "base64";
    const commands =
      route === "publish"
        ? [publishCommand(path, body)]
        : route === "single"
          ? [parseCommand(parseJson(body), "body")]
          : parseCommandList(parseJson(body));
    this.#options.stats.countCommands(commands);
    const fault = this.#options.faults.take(commands);
    if (fault !== undefined && !(await this.#applyBefore(fault, req, res))) return;
    const replace = fault?.kind === "noscript" ? noscriptFor : undefined;
    const [status, reply] = await this.#run(route, commands, base64, replace);
    if (fault?.kind === "reset-after") return resetConnection(req);
    this.#send(res, status, reply);
  }

  /** An SSE stream: counted and faulted like a one-command request, then handed to the streams. */
  async #subscribe(subscription: ParsedCommand, req: IncomingMessage, res: ServerResponse) {
    this.#options.stats.countCommands([subscription]);
    const fault = this.#options.faults.take([subscription]);
    if (fault !== undefined && !(await this.#applyBefore(fault, req, res))) return;
    await this.#streams.serve(req, res, subscription, {
      syncToken: String(++this.#sync),
      resetAfterConfirm: fault?.kind === "reset-after",
    });
  }

  /** Applies what a fault does before the command runs; false when the request is finished. */
  async #applyBefore(fault: Fault, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    switch (fault.kind) {
      case "latency": {
        const ms = this.#options.faults.delayOf(fault.ms);
        if (ms > 0) await sleep(ms);
        return true;
      }
      case "status":
        if (fault.body === undefined) this.#send(res, fault.status, INJECTED);
        else this.#send(res, fault.status, fault.body, "text/plain; charset=utf-8");
        return false;
      case "hang":
        // Never answer. When the client gives up, its socket closes and Node frees the request;
        // stop() drops whatever is still hanging.
        res.once("close", () => req.socket.destroy());
        return false;
      case "reset-before":
        resetConnection(req);
        return false;
      default:
        return true;
    }
  }

  async #run(
    route: Route,
    commands: ParsedCommand[],
    base64: boolean,
    replace: ((command: ParsedCommand) => RedisReply | undefined) | undefined,
  ): Promise<readonly [number, string]> {
    const { backend } = this.#options;
    if (route === "single" || route === "publish") {
      const command = commands[0] as ParsedCommand;
      const reply = replace?.(command) ?? (await backend.command(command));
      return [reply instanceof Error ? 400 : 200, encodeEntry(reply, base64)];
    }
    if (route === "pipeline") {
      return [200, encodeEntries(await backend.pipeline(commands, replace), base64)];
    }
    const outcome = await backend.transaction(commands, replace);
    return outcome.ok
      ? [200, encodeEntries(outcome.replies, base64)]
      : [400, encodeError(outcome.error)];
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function noscriptFor(command: ParsedCommand): RedisReply | undefined {
  return isEvalsha(command) ? NOSCRIPT : undefined;
}
