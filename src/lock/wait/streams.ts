import type { Budget } from "../../budget";
import type { RestNode, SubscriberLike } from "../../node";
import { newToken, unref } from "../timing";

/**
 * Hand-off messages (docs/SAFETY.md §6 "The queue"). A waiting call is registered in its key's
 * queue on every node; a release (or any script that finds the key free) hands the key straight
 * to the queue's first live waiter and publishes `token|look|gap|handMs|fence` on the channel of
 * that waiter's instance for the key on that node. So an instance listens on one stream per node
 * and key, shared by its waiting callers, and routes each message to the call whose token it
 * names. A message is only evidence the caller counts (`Tally.handed`): losing one costs time,
 * never safety, and a message can never place anything.
 *
 * @module
 */

/** A hand-off message as published by `QUEUE`'s `handoff` (see `lua.ts`). */
export interface Handoff {
  readonly token: string;
  /** The look whose registration the node counted the gap from. */
  readonly look: number;
  /** Node ms between that registration and the hand-off (never overstated: see `clock()`). */
  readonly gap: number;
  /** The hand-off's TTL, ms. */
  readonly handMs: number;
  /** The fence issued with it (0: none). */
  readonly fence: number;
  /** A semaphore's hand-off: the slot it placed the token on. */
  readonly slot?: number;
}

const count = (text: string | undefined): number | undefined => {
  const value = Number(text);
  return text !== undefined && /^\d+$/.test(text) && Number.isSafeInteger(value)
    ? value
    : undefined;
};

/**
 * Read a hand-off message; `undefined` for anything of another shape (a message is counted only
 * when every field is a whole number where one is expected).
 *
 * @example
 * parseHandoff("9f2c…|3|240|1000|0") // { token: "9f2c…", look: 3, gap: 240, handMs: 1000, fence: 0 }
 */
export function parseHandoff(message: unknown): Handoff | undefined {
  if (typeof message !== "string") return undefined;
  const [token, ...rest] = message.split("|");
  const fields = rest.map(count);
  // A semaphore's slot scripts add the slot: `…|fence|slot`.
  const shaped = fields.length === 4 || fields.length === 5;
  if (!shaped || fields.includes(undefined) || !/^[0-9a-f]{32}$/.test(token ?? ""))
    return undefined;
  const [look, gap, handMs, fence, slot] = fields as number[];
  const handoff = { token: token as string, look, gap, handMs, fence } as Handoff;
  return slot === undefined ? handoff : { ...handoff, slot };
}

/**
 * How long a stream stays open after its last waiter is done: the next wait for the key in this
 * instance (a warm process locking it again) then needs no new stream. Bounded, so a Node process
 * that is done exits at most this much later.
 */
export const LINGER_MS = 1_000;

/**
 * The linger time on this runtime, or `-1` on Cloudflare Workers: there a stream belongs to the
 * request that opened it and the runtime ends it with that request, so an unused stream is only
 * forgotten (a later request of the isolate opens its own rather than listen on a dead one), not
 * aborted: aborting it from JS leaves an unhandled `AbortError` from `@upstash/redis`'s stream
 * reader in workerd (1.39). It stays open until its request ends.
 */
export function lingerMs(): number {
  const agent = (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent;
  return agent === "Cloudflare-Workers" ? -1 : LINGER_MS;
}

/** One node's stream of one key's channel. */
interface Stream {
  readonly subscriber: SubscriberLike;
  ready: boolean;
  failed: boolean;
  users: number;
  readonly calls: Map<string, (handoff: Handoff) => void>;
  /** Told once the stream opened or failed. */
  readonly settled: Promise<void>;
  linger?: ReturnType<typeof setTimeout> | undefined;
}

/** A call's use of its key's streams (see {@link HandoffStreams.listen}). */
export interface Listening {
  /**
   * Charge the streams this call opened to `budget` (one subrequest each) and wait until each of
   * them opened or failed, at most `ms`: a registration before its node's stream is open is
   * skipped by a hand-off there (nobody listens yet).
   */
  opened(budget: Budget | undefined, ms: number): Promise<void>;
  /** Whether the stream to node `index` is open (a hand-off there reaches this call). */
  ready(index: number): boolean;
  /** Stop listening; a stream closes when its last user stops. Idempotent. */
  close(): void;
}

/**
 * The hand-off streams of one `Locks` instance: per key and node at most one SSE stream on the
 * channel `<queue key>:<instance id>`, shared by the instance's callers waiting for that key and
 * closed {@link lingerMs} after the last of them stopped (an open stream keeps a Node process
 * alive). On Workers a request may have six connections *waiting for response headers*: an open
 * stream no longer counts, so N streams and the rounds of N requests do not starve each other.
 *
 * @example
 * const listening = streams.listen(core.nodes, queueKey, token, (index, handoff) => tally.handed(…));
 * listening.close();
 */
export class HandoffStreams {
  /** This instance's part of its channels' names (hex). */
  readonly id = newToken().slice(0, 12);
  readonly #streams = new Map<string, Stream>();

  /**
   * `linger`: ms an unused stream stays open; `-1`: forget it, leaving it to its runtime request
   * (default {@link lingerMs}).
   */
  constructor(private readonly linger = lingerMs()) {}

  /**
   * Listen for hand-offs to `token` on `queue` (a key's queue key) from every node in `nodes`,
   * opening the streams not open yet. `onHandoff` runs once per message for this call.
   */
  listen(
    nodes: readonly RestNode[],
    queue: string,
    token: string,
    onHandoff: (index: number, handoff: Handoff) => void,
  ): Listening {
    const before = this.#streams.size;
    const used = nodes.map((node) => this.#use(node, queue));
    const fresh = this.#streams.size - before;
    used.forEach((stream, position) => {
      const index = nodes[position]?.index ?? position;
      stream?.calls.set(token, (handoff) => onHandoff(index, handoff));
    });
    let closed = false;
    return {
      opened: async (budget, ms) => {
        if (fresh > 0) budget?.charge(fresh);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, ms);
        });
        await Promise.race([Promise.all(used.map((stream) => stream?.settled)), late]);
        if (timer !== undefined) clearTimeout(timer);
      },
      ready: (index) => {
        const stream = used[nodes.findIndex((n) => n.index === index)];
        return stream?.ready === true && !stream.failed;
      },
      close: () => {
        if (closed) return;
        closed = true;
        used.forEach((stream, position) => {
          if (stream === undefined) return;
          stream.calls.delete(token);
          this.#release(`${queue}|${nodes[position]?.index}`, stream);
        });
      },
    };
  }

  /** Streams open now (for tests). */
  get size(): number {
    return this.#streams.size;
  }

  #use(node: RestNode, queue: string): Stream | undefined {
    const name = `${queue}|${node.index}`;
    let stream = this.#streams.get(name);
    if (stream === undefined || stream.failed) {
      stream = this.#open(node, `${queue}:${this.id}`);
      if (stream === undefined) return undefined;
      this.#streams.set(name, stream);
    }
    stream.users++;
    if (stream.linger !== undefined) clearTimeout(stream.linger);
    stream.linger = undefined;
    return stream;
  }

  #release(name: string, stream: Stream): void {
    if (--stream.users > 0) return;
    if (this.linger < 0) {
      if (this.#streams.get(name) === stream) this.#streams.delete(name);
      return;
    }
    if (stream.failed || this.linger === 0) {
      this.#drop(name, stream);
      return;
    }
    stream.linger = setTimeout(() => {
      if (stream.users === 0) this.#drop(name, stream);
    }, this.linger);
    unref(stream.linger);
  }

  #drop(name: string, stream: Stream): void {
    if (stream.linger !== undefined) clearTimeout(stream.linger);
    if (this.#streams.get(name) === stream) this.#streams.delete(name);
    stream.subscriber.unsubscribe().catch(() => {});
  }

  #open(node: RestNode, channel: string): Stream | undefined {
    let subscriber: SubscriberLike | undefined;
    try {
      subscriber = node.subscribe(channel);
    } catch {
      return undefined;
    }
    if (subscriber === undefined) return undefined;
    let settle = (): void => {};
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const stream: Stream = {
      subscriber,
      ready: false,
      failed: false,
      users: 0,
      calls: new Map(),
      settled,
    };
    subscriber.on("subscribe", () => {
      stream.ready = true;
      settle();
    });
    subscriber.on("error", () => {
      stream.failed = true;
      settle();
    });
    subscriber.on("message", (data) => {
      const handoff = parseHandoff((data as { message?: unknown } | undefined)?.message);
      if (handoff !== undefined) stream.calls.get(handoff.token)?.(handoff);
    });
    return stream;
  }
}
