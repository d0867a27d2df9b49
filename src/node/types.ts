/**
 * The smallest slice of an `@upstash/redis` `Redis` instance that edgelock uses: running a Lua
 * script by SHA-1 and by source. Any `Redis` from `@upstash/redis` (Node, Cloudflare or Fastly
 * entry, `Redis.fromEnv()`) satisfies it; edgelock sends its scripts through that client's HTTP
 * requester rather than these methods, so the client's reply deserialization (on by default) never
 * touches them. Any other implementation must resolve with the reply as the node sent it (no JSON
 * decoding of strings).
 *
 * @example
 * createLocks({ nodes: [Redis.fromEnv()] });
 */
export interface RedisLike {
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
  evalsha(sha1: string, keys: string[], args: string[]): Promise<unknown>;
}

/**
 * The slice of an `@upstash/redis` `Subscriber` (from `redis.subscribe(channel)`) that the wait
 * queue's hand-off messages use: `subscribe` fires with the subscription count once the SSE stream is open,
 * `message` with `{ channel, message }`, `error` when the stream could not be opened.
 */
export interface SubscriberLike {
  on(type: "subscribe" | "message" | "error", listener: (data: unknown) => void): void;
  unsubscribe(): Promise<void>;
}

/**
 * REST credentials of one node; edgelock builds a lock-suited client from them.
 *
 * @example
 * { url: env.UPSTASH_EU_URL, token: env.UPSTASH_EU_TOKEN }
 */
export interface NodeCredentials {
  /** REST URL, e.g. `https://eu1-x.upstash.io` (http allowed for local development). */
  readonly url: string;
  /** REST token (sent as `Authorization: Bearer`; never logged or put in errors). */
  readonly token: string;
}

/**
 * One entry of the `nodes` option: a `Redis` instance you built (`Redis.fromEnv()`; its URL, token
 * and retry settings then apply, edgelock's scripts bypass its auto-pipelining and reply
 * deserialization, and edgelock imposes its timeout by racing), or
 * `{ url, token }` (edgelock builds a client with one attempt per request, no auto-pipelining and
 * an aborting per-request timeout).
 *
 * @example
 * const nodes: NodeInput[] = [Redis.fromEnv(), { url: url2, token: token2 }, { url: url3, token: token3 }];
 */
export type NodeInput = RedisLike | NodeCredentials;
