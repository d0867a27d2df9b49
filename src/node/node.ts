import { classify } from "./classify";
import type { RedisLike } from "./types";

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

  clear(): void {
    this.#next = undefined;
  }

  /** Called by the client once per request. */
  readonly take = (): AbortSignal => {
    const signal = this.#next;
    this.#next = undefined;
    // Nothing parked (a client version that reads the signal later): never abort from the client
    // side; our race below still reports the timeout.
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

  /**
   * Run one client call with a timeout of `timeoutMs`. On a client we built the fetch is aborted;
   * on a user-supplied client the call is raced (the request may still complete in the
   * background, and the client's own retry settings apply).
   *
   * @throws {TransportError} timeout, network failure, server error or unparsable reply
   */
  async send(run: (redis: RedisLike) => Promise<unknown>, timeoutMs: number): Promise<unknown> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError"));
    }, timeoutMs);
    let pending: Promise<unknown>;
    this.slot?.park(controller.signal);
    try {
      pending = run(this.redis);
    } catch (error) {
      pending = Promise.reject(error);
    } finally {
      this.slot?.clear();
    }
    try {
      return await new Promise<unknown>((resolve, reject) => {
        const onAbort = () => reject(controller.signal.reason);
        controller.signal.addEventListener("abort", onAbort, { once: true });
        pending.then(resolve, reject).finally(() => {
          controller.signal.removeEventListener("abort", onAbort);
        });
      });
    } catch (error) {
      throw classify(this.index, this.host, error, timedOut ? timeoutMs : undefined);
    } finally {
      clearTimeout(timer);
    }
  }
}
