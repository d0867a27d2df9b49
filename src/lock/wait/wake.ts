import type { RestNode, SubscriberLike } from "../../node";
import type { RoomRegistration } from "../../scripts";
import { newToken, unref } from "../timing";

/**
 * Wake-up on release (the `wake` option). Polling a busy lock costs a request per look and
 * leaves the lock idle between a release and the next look; across independent clients (one
 * per invocation) nothing local can tell a waiter the lock was freed. So a waiting caller
 * registers in the key's wait room on the nodes it asks (the ACQUIRE script adds it to a sorted
 * set, in the order of its first look) and listens over Upstash's SSE route on its instance's
 * channel of the room; a release pops the room's first live waiter, reserves the key for it
 * briefly and publishes its entry on that waiter's channel only (RELEASE script), so exactly one
 * waiter hears of each release, and newcomers queue behind it instead of barging in.
 *
 * The signal is a hint and never part of mutual exclusion: a woken waiter still needs a majority
 * round. A lost wake-up (the stream dropped, the woken waiter is gone or never heard it) costs
 * latency only, because a listening waiter still looks at the lock at the holder's expiry or after
 * `retryDelayMax` at the latest. Part of waiting strategy 3, pacing; keeps docs/SAFETY.md §6
 * "Wake-ups are hints only".
 *
 * @module
 */

/**
 * A waiter's place in a wait room: `member` = `<deadline epoch ms>:<listener>:<call>` (RELEASE
 * skips members whose deadline ends within the reservation: callers that stopped waiting or are
 * about to, and publishes on
 * `<room>:<listener>`, the channel of the waiter's `Locks` instance), `place` = epoch ms of its
 * first look (the room's order, the same on every node).
 */
export interface WaiterEntry {
  readonly member: string;
  readonly place: number;
}

/**
 * The entry of a caller of the instance whose channels are `listener`'s, waiting at most `waitMs`.
 *
 * @example
 * const entry = waiterEntry(5_000, core.channels.id);
 * // { member: "1763784005000:9f2c41d07a3b:5e01c2aa", place: 1763784000000 }
 */
export function waiterEntry(waitMs: number, listener: string): WaiterEntry {
  const now = Date.now();
  return {
    member: `${now + Math.ceil(Math.max(0, waitMs))}:${listener}:${newToken().slice(0, 8)}`,
    place: now,
  };
}

/**
 * The registration ACQUIRE makes of `entry` while the key is held, keeping the room for `roomTtl`
 * ms after this look at least.
 *
 * @example
 * core.acquireRound(keys, token, ttl, timeoutMs, budget, undefined, registration(entry, 10_000));
 */
export function registration(entry: WaiterEntry, roomTtl: number): RoomRegistration {
  return { member: entry.member, place: entry.place, roomMs: Math.ceil(roomTtl) };
}

/** One caller's use of a room's subscription. */
export interface Watch {
  /** Index of the node the subscription is on (register and probe there). */
  readonly node: number;
  /** This call opened the stream (one request) rather than joining an open one. */
  readonly opened: boolean;
  /** The stream is open: a release on that node reaches this caller. */
  readonly ready: boolean;
  /** The subscription failed: fall back to polling. */
  readonly failed: boolean;
  /** Settles when a release wakes `member` (one wait per member at a time; never rejects). */
  woken(member: string): Promise<void>;
  /**
   * A release went unheard (the lock was free after a sleep no wake-up ended): the stream may
   * be dead without saying so (on Workers a stream ends with the request that opened it), so the
   * next caller opens a fresh one.
   */
  missed(): void;
  /** Stop using it; the stream closes when its last user stops. Idempotent. */
  close(): void;
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

interface Channel {
  readonly node: number;
  readonly subscriber: SubscriberLike;
  ready: boolean;
  failed: boolean;
  users: number;
  readonly waiters: Map<string, () => void>;
  /** Wake-ups that came while their caller was between two sleeps (looking at the lock). */
  readonly early: Set<string>;
  /** Closes the stream once it has been unused for {@link LINGER_MS}. */
  linger?: ReturnType<typeof setTimeout> | undefined;
}

/**
 * The wake-up subscriptions of one `Locks` instance: at most one SSE stream per wait room, shared
 * by its callers and closed {@link lingerMs} after the last of them stopped waiting (an open
 * stream keeps a Node process alive and holds one of a Worker's six connections).
 *
 * @example
 * const watch = channels.watch(node, "lock:k:wait");
 * if (watch?.ready) await Promise.race([watch.woken(entry.member), sleep(1_000)]);
 * watch?.close();
 */
export class WakeChannels {
  /** This instance's part of its waiters' entries and of its channels' names (hex). */
  readonly id = newToken().slice(0, 12);
  readonly #channels = new Map<string, Channel>();

  /**
   * `linger`: ms an unused stream stays open; `-1`: forget it, leaving it to its runtime request
   * (default {@link lingerMs}).
   */
  constructor(private readonly linger = lingerMs()) {}

  /**
   * Use the subscription to `room` (opened on `node` unless one is open already, possibly on
   * another node: see {@link Watch.node}). `undefined` when the node's client cannot subscribe.
   */
  watch(node: RestNode, room: string): Watch | undefined {
    const open = this.#channels.get(room);
    const opened = open === undefined || open.failed;
    const channel = opened ? this.#open(node, room) : open;
    if (channel === undefined) return undefined;
    channel.users++;
    if (channel.linger !== undefined) clearTimeout(channel.linger);
    channel.linger = undefined;
    const used = channel;
    let closed = false;
    return {
      node: used.node,
      opened,
      get ready() {
        return used.ready && !used.failed;
      },
      get failed() {
        return used.failed;
      },
      missed: () => {
        used.failed = true;
      },
      woken: (member) =>
        new Promise<void>((resolve) => {
          if (used.early.delete(member)) resolve();
          else used.waiters.set(member, resolve);
        }),
      close: () => {
        if (closed) return;
        closed = true;
        if (--used.users > 0) return;
        used.waiters.clear();
        used.early.clear();
        if (this.linger < 0) {
          if (this.#channels.get(room) === used) this.#channels.delete(room);
          return;
        }
        if (used.failed || this.linger === 0) {
          this.#drop(room, used);
          return;
        }
        used.linger = setTimeout(() => {
          if (used.users === 0) this.#drop(room, used);
        }, this.linger);
        unref(used.linger);
      },
    };
  }

  /** Subscriptions open now (for tests). */
  get size(): number {
    return this.#channels.size;
  }

  #drop(room: string, channel: Channel): void {
    if (channel.linger !== undefined) clearTimeout(channel.linger);
    if (this.#channels.get(room) === channel) this.#channels.delete(room);
    channel.subscriber.unsubscribe().catch(() => {});
  }

  #open(node: RestNode, room: string): Channel | undefined {
    let subscriber: SubscriberLike | undefined;
    try {
      subscriber = node.subscribe(`${room}:${this.id}`);
    } catch {
      return undefined;
    }
    if (subscriber === undefined) return undefined;
    const channel: Channel = {
      node: node.index,
      subscriber,
      ready: false,
      failed: false,
      users: 0,
      waiters: new Map(),
      early: new Set(),
    };
    subscriber.on("subscribe", () => {
      channel.ready = true;
    });
    subscriber.on("error", () => {
      channel.failed = true;
    });
    subscriber.on("message", (data) => {
      const member = String((data as { message?: unknown } | undefined)?.message);
      const notify = channel.waiters.get(member);
      if (notify === undefined) {
        // Kept for the caller's next sleep: a release may beat it to its sleep.
        if (channel.users > 0) channel.early.add(member);
        return;
      }
      channel.waiters.delete(member);
      notify();
    });
    this.#channels.set(room, channel);
    return channel;
  }
}
