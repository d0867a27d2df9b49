/**
 * Upstash's pub/sub routes on the dev endpoint, so code that uses `redis.subscribe()` /
 * `redis.psubscribe()` of `@upstash/redis` can run against a dev cluster too
 * (docs/DETAILS.md "The local endpoint"):
 *
 * - `POST /subscribe/<channel>` and `POST /psubscribe/<pattern>` (the client posts `[]` with
 *   `Accept: text/event-stream`; `GET` also works, for a browser `EventSource` with `?_token=`):
 *   200 `text/event-stream`, headers flushed as soon as redis-server accepted the connection, then
 *   one `data: <event>\n\n` per event: `subscribe,<ch>,<count>` once Redis confirmed the
 *   subscription, then `message,<ch>,<payload>` (`psubscribe,<pat>,<count>`,
 *   `pmessage,<pat>,<ch>,<payload>`).
 * - `POST /publish/<channel>/<message>`: PUBLISH with its arguments in the path (or the raw body as
 *   the message) → `{"result":<receivers>}`.
 *
 * Everything after the route's `/` is one percent-decoded channel, slashes included: the client
 * joins the path without encoding it, so `subscribe("news/eu")` arrives as `/subscribe/news/eu`.
 * Payloads are the raw message text, never base64 (the client's stream reader ignores
 * `Upstash-Encoding` and JSON-parses what it can); a payload with a newline reaches the client cut
 * at the newline, because the client splits the stream on `\n`.
 *
 * Why a connection per stream: a subscribed connection accepts only (un)subscribe commands, so it
 * cannot be the shared one, and closing one stream is then just closing its connection, which
 * makes Redis drop exactly that subscription. Streams end when the HTTP client goes away, when the
 * connection to redis-server breaks (a kill or restart loses the subscription; the client must see
 * the stream end rather than miss messages silently), and when the endpoint closes.
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { type Backend, BackendUnavailableError } from "./backend";
import { replyHeaders, resetConnection } from "./http";
import { BadRequestError, type ParsedCommand } from "./request";

/** The pub/sub routes, named after the command each one runs. */
export type PubSubRoute = "subscribe" | "psubscribe" | "publish";

const PREFIXES: ReadonlyArray<readonly [string, PubSubRoute]> = [
  ["/subscribe/", "subscribe"],
  ["/psubscribe/", "psubscribe"],
  ["/publish/", "publish"],
];

/**
 * Redis's own limit for slow pub/sub clients (`client-output-buffer-limit pubsub 32mb`): a reader
 * that falls this far behind is dropped rather than buffered without bound in this process.
 */
const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;

/** The pub/sub route a path names; `undefined` for any other path. */
export function pubSubRouteOf(path: string): PubSubRoute | undefined {
  return PREFIXES.find(([prefix]) => path.startsWith(prefix))?.[1];
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new BadRequestError(`ERR malformed percent-encoding in the path: ${segment}`);
  }
}

const rest = (path: string, route: PubSubRoute): string => path.slice(route.length + 2);

/** The `SUBSCRIBE`/`PSUBSCRIBE` of a stream route, for faults and statistics like any command. */
export function subscriptionOf(route: "subscribe" | "psubscribe", path: string): ParsedCommand {
  const target = decode(rest(path, route));
  if (target === "") {
    const what = route === "subscribe" ? "channel" : "pattern";
    throw new BadRequestError(`ERR missing ${what}: expected /${route}/<${what}>`);
  }
  return { name: route, lower: route, args: [target] };
}

/**
 * `PUBLISH` from `/publish/<ch>/<msg>`. As in Upstash's path-style commands, each segment is one
 * argument and a non-empty body is one more, so `/publish/<ch>` with a body publishes the body.
 */
export function publishCommand(path: string, body: Buffer): ParsedCommand {
  const args = rest(path, "publish").split("/").map(decode);
  if (body.length > 0) args.push(body.toString("utf8"));
  if (args.length !== 2) {
    throw new BadRequestError("ERR wrong number of arguments for 'publish' command");
  }
  return { name: "publish", lower: "publish", args };
}

/** How one stream is served. */
export interface StreamOptions {
  /** The reply's `upstash-sync-token`. */
  readonly syncToken: string;
  /**
   * The `reset-after` fault: subscribe on Redis, then reset the connection instead of answering
   * (the headers are held back until then, so the client sees a failed request and may retry).
   */
  readonly resetAfterConfirm: boolean;
}

/** The open SSE streams of one endpoint. */
export class SubscriptionStreams {
  readonly #backend: Backend;
  /** One `finish` per stream that holds a subscriber connection. */
  readonly #open = new Set<() => void>();
  #closed = false;

  constructor(backend: Backend) {
    this.#backend = backend;
  }

  /**
   * Serves `subscription` (from {@link subscriptionOf}) as an SSE stream. Resolves once the stream
   * is set up; throws {@link BackendUnavailableError} (a 503) when redis-server is unreachable
   * before anything was sent.
   */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    subscription: ParsedCommand,
    options: StreamOptions,
  ): Promise<void> {
    // A request that waited (latency fault) while the endpoint closed or the client left: a
    // subscription nobody reads would only be a leaked connection.
    if (this.#closed || res.destroyed) {
      res.destroy();
      return;
    }
    const pattern = subscription.lower === "psubscribe";
    const target = subscription.args[0] as string;
    const connection = this.#backend.subscriber();
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      this.#open.delete(finish);
      connection.disconnect();
      // A started stream ends cleanly (the client's reader sees the end); one that never started
      // is answered by the caller (503) or already gone.
      if (res.headersSent && !res.writableEnded) res.end();
    };
    this.#open.add(finish);
    res.once("close", finish);
    // Without reconnects, an error is always followed by the end of the connection.
    connection.on("error", finish);
    connection.once("end", finish);

    try {
      await connection.connect();
    } catch (error) {
      finish();
      if (res.destroyed) return;
      throw unavailable(error);
    }
    if (finished) return;

    // Redis sends the confirmation before any message, but ioredis resolves the subscribe promise
    // a microtask after emitting messages parsed from the same read: hold them back until then.
    let confirmed = false;
    const held: string[] = [];
    const write = (event: string): void => {
      if (finished) return;
      if (!confirmed) held.push(event);
      else if (res.writableLength > MAX_BUFFERED_BYTES) finish();
      else res.write(`data: ${event}\n\n`);
    };
    if (pattern) {
      connection.on("pmessage", (pat: string, channel: string, message: string) =>
        write(`pmessage,${pat},${channel},${message}`),
      );
    } else {
      connection.on("message", (channel: string, message: string) =>
        write(`message,${channel},${message}`),
      );
    }
    if (!options.resetAfterConfirm) {
      res.writeHead(200, sseHeaders(options.syncToken));
      res.flushHeaders();
    }

    let count: unknown;
    try {
      count = pattern ? await connection.psubscribe(target) : await connection.subscribe(target);
    } catch (error) {
      finish();
      if (res.headersSent || res.destroyed) return;
      throw unavailable(error);
    }
    if (finished) return;
    if (options.resetAfterConfirm) {
      finish();
      resetConnection(req);
      return;
    }
    confirmed = true;
    write(`${subscription.lower},${target},${String(count)}`);
    for (const event of held.splice(0)) write(event);
  }

  /** Ends every stream and refuses new ones; the endpoint is closing. */
  closeAll(): void {
    this.#closed = true;
    for (const finish of [...this.#open]) finish();
  }
}

function sseHeaders(syncToken: string): string[] {
  return [
    "content-type",
    "text/event-stream",
    "cache-control",
    "no-cache",
    ...replyHeaders(syncToken),
  ];
}

function unavailable(error: unknown): BackendUnavailableError {
  const message = error instanceof Error ? error.message : String(error);
  return new BackendUnavailableError(`redis-server unavailable: ${message}`, { cause: error });
}
