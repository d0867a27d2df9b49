import { classify } from "./classify";
import type { RedisLike, SubscriberLike } from "./types";

/**
 * Hands a per-request `AbortSignal` to a client we built. `@upstash/redis` reads its `signal`
 * option when a request starts; given as a function it is called synchronously inside
 * `redis.evalsha(...)` before the first `await`, so the signal we park here right before the call
 * is the one that request gets. A function signal also makes the client rethrow an abort instead of
 * fabricating a 200 `{"result": reason}` (its behaviour for a plain fired `AbortSignal`).
 */
export class SignalSlot {
  #next: AbortSignal | undefined;

  park(signal: AbortSignal): void {
    this.#next = signal;
  }

  /** Drop the parked signal; `true` when the client never took it (it cannot abort that call). */
  clear(): boolean {
    const untaken = this.#next !== undefined;
    this.#next = undefined;
    return untaken;
  }

  /** Called by the client once per request. */
  readonly take = (): AbortSignal => {
    const signal = this.#next;
    this.#next = undefined;
    // Nothing parked (a client version that reads the signal later): never abort from the client
    // side; `send` sees the signal was not taken and races the call instead.
    return signal ?? new AbortController().signal;
  };
}

/**
 * One REST node: an `@upstash/redis` client plus its position and host. Every request goes through
 * {@link RestNode.send}, which imposes the per-request timeout and turns any failure into a
 * `TransportError` naming the node by index and host.
 */
export class RestNode {
  constructor(
    /** Position in the `nodes` option. */
    readonly index: number,
    /** Host (and port) of the REST URL, or `node<index>` when the client hides it. */
    readonly host: string,
    private readonly redis: RedisLike,
    /** Present when edgelock built the client: the timeout then aborts the fetch itself. */
    private readonly slot: SignalSlot | undefined,
    /**
     * SHA-1s of scripts known to be in this node's script cache (sent with EVAL once, then
     * EVALSHA). Shared per URL within an isolate, so `createLocks` per request stays cheap.
     */
    readonly knownScripts: Set<string> = new Set(),
  ) {}

  /** Whether the client can subscribe (see {@link subscribe}): a waiter needs every node's stream. */
  get streams(): boolean {
    return typeof (this.redis as { subscribe?: unknown }).subscribe === "function";
  }

  /**
   * Subscribe to `channel` over the client's SSE route (`/subscribe/<channel>`), or `undefined`
   * when the client has no `subscribe` (a `RedisLike` that is not `@upstash/redis`).
   */
  subscribe(channel: string): SubscriberLike | undefined {
    const { subscribe } = this.redis as { subscribe?: (channel: string) => SubscriberLike };
    return typeof subscribe === "function" ? subscribe.call(this.redis, channel) : undefined;
  }

  /**
   * Run one client call with a timeout of `timeoutMs`. On a client we built the fetch is aborted;
   * on a user-supplied client the call is raced (the request may still complete in the
   * background, and the client's own retry settings apply).
   *
   * `signal`: the round's shared timeout signal (one timer for every request of a round, which
   * all have the same deadline), used instead of a timer of this request's own. It must abort
   * with a `TimeoutError` after `timeoutMs` at the latest.
   *
   * @throws {TransportError} timeout, network failure, server error or unparsable reply
   */
  async send(
    run: (redis: RedisLike) => Promise<unknown>,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<unknown> {
    if (signal !== undefined) return this.#sendWith(run, timeoutMs, signal);
    const controller = new AbortController();
    const timer = setTimeout(() => {
      controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError"));
    }, timeoutMs);
    try {
      return await this.#sendWith(run, timeoutMs, controller.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  async #sendWith(
    run: (redis: RedisLike) => Promise<unknown>,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<unknown> {
    let pending: Promise<unknown>;
    let aborts = this.slot !== undefined;
    this.slot?.park(signal);
    try {
      pending = run(this.redis);
    } catch (error) {
      pending = Promise.reject(error);
    } finally {
      if (this.slot?.clear()) aborts = false;
    }
    try {
      // Our own client aborts its fetch on `signal` and then rejects: nothing to race.
      return await (aborts ? pending : raced(pending, signal));
    } catch (error) {
      throw classify(this.index, this.host, error, signal.aborted ? timeoutMs : undefined);
    }
  }
}

/** `pending`, or a rejection with `signal`'s reason as soon as it aborts (a client we cannot abort). */
function raced(pending: Promise<unknown>, signal: AbortSignal): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    pending.then(resolve, reject).finally(() => {
      signal.removeEventListener("abort", onAbort);
    });
  });
}
