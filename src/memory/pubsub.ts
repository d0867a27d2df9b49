/**
 * Pub/sub inside one memory node: the wake-up channels of edgelock's waiters. A script's PUBLISH
 * reaches every subscriber of the channel in a microtask, never a timer, so it arrives under fake
 * timers too; a subscriber is told it is subscribed the same way.
 *
 * @module
 */
import type { SubscriberLike } from "../node";

type Listener = (data: unknown) => void;
type Event = "subscribe" | "message" | "error";

/** One subscription: the `@upstash/redis` `Subscriber` events edgelock listens to. */
class Subscription implements SubscriberLike {
  readonly #listeners = new Map<Event, Listener[]>();
  #open = true;

  constructor(
    readonly channel: string,
    private readonly leave: (subscription: Subscription) => void,
  ) {}

  on(type: Event, listener: Listener): void {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }

  async unsubscribe(): Promise<void> {
    this.#open = false;
    this.leave(this);
  }

  /** Emit `type` in a microtask, unless unsubscribed by then. */
  emit(type: Event, data: unknown): void {
    queueMicrotask(() => {
      if (!this.#open) return;
      for (const listener of this.#listeners.get(type) ?? []) listener(data);
    });
  }
}

/**
 * The channels of one node.
 *
 * @example
 * const channels = new Channels();
 * const sub = channels.subscribe("room:1");
 * sub.on("message", ({ message }) => console.log(message));
 * channels.publish("room:1", "hello");
 */
export class Channels {
  readonly #subscribers = new Map<string, Set<Subscription>>();

  subscribe(channel: string): SubscriberLike {
    const set = this.#subscribers.get(channel) ?? new Set<Subscription>();
    this.#subscribers.set(channel, set);
    const subscription = new Subscription(channel, (s) => {
      set.delete(s);
      if (set.size === 0 && this.#subscribers.get(channel) === set) {
        this.#subscribers.delete(channel);
      }
    });
    set.add(subscription);
    subscription.emit("subscribe", 1);
    return subscription;
  }

  /** Deliver `message` to the channel's subscribers; how many there are. */
  publish(channel: string, message: string): number {
    const set = this.#subscribers.get(channel);
    for (const subscription of set ?? []) subscription.emit("message", { channel, message });
    return set?.size ?? 0;
  }
}
