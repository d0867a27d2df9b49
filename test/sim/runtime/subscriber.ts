/**
 * A simulated wake-up stream (what `redis.subscribe(channel)` returns in `@upstash/redis`): it
 * opens after a network delay, or fails to (an `error` event); once open it receives the PUBLISHes
 * on its channel made on its own node, each with a delay or lost (`cluster.ts`). It may drop later,
 * and it breaks when its node goes down: reported with an `error` (a reset connection) or not at
 * all (a half-open one, or a Workers stream ended with its request), per its fate.
 *
 * Events follow `@upstash/redis` 1.39: listeners run synchronously in the order they were added,
 * `subscribe` carries the subscription count, `message` `{ channel, message }`, and `unsubscribe()`
 * removes every listener.
 *
 * @module
 */

import type { SubscriberLike } from "../../../src/node/types";
import type { NodeStream, Owner, SimCluster } from "./cluster";
import { drawMessageFate, drawStreamFate } from "./fates";
import type { Random } from "./random";

type EventType = "subscribe" | "message" | "error";
type Listener = (data: unknown) => void;

/** Options of {@link SimSubscriber}. */
export interface StreamOptions {
  readonly node: number;
  readonly channel: string;
  /** The link's stream: the opening's delay and success (as the regression seeds expect). */
  readonly random: Random;
  /** The stream's own fates (drop, notice), so they shift none of the link's request fates. */
  readonly fates: Random;
  /** Its messages' fates (late, duplicated), a stream of their own. */
  readonly messages: Random;
  readonly owner?: Owner | undefined;
  /** For traces: `c<client>>n<node>`. */
  readonly label: string;
}

/** A broken stream, as the SSE reader reports it. */
const streamError = (): Error => new TypeError("terminated");

/**
 * @example
 * const sub = new SimSubscriber(cluster, { node: 0, channel, random, fates, messages, label: "c0>n0" });
 * sub.on("message", ({ message }) => wake(message));
 */
export class SimSubscriber implements SubscriberLike {
  readonly #listeners = new Map<EventType, Set<Listener>>();
  readonly #stream: NodeStream;
  #closed = false;
  #notice = false;

  constructor(
    private readonly cluster: SimCluster,
    private readonly options: StreamOptions,
  ) {
    const { channel } = options;
    this.#stream = {
      channel,
      owner: options.owner,
      deliver: (message) => {
        const hear = () => {
          cluster.trace?.(`${options.label} heard ${message}`);
          this.#emit("message", { channel, message });
        };
        const fate = drawMessageFate(options.messages, cluster.weather);
        if (fate.late > 0) cluster.scheduler.after(fate.late, hear);
        else hear();
        if (fate.again !== undefined) cluster.scheduler.after(fate.late + fate.again, hear);
      },
      broken: () => {
        if (!this.#notice) return;
        const delay = options.fates.between(cluster.weather.delay);
        cluster.scheduler.after(delay, () => this.#emit("error", streamError()));
      },
    };
    const { random } = options;
    const { weather, scheduler } = cluster;
    scheduler.after(random.between(weather.delay), () => {
      if (this.#closed) return;
      // Drawn only when the node is up, in this order: the regression seeds depend on it.
      if (cluster.host(options.node).state !== "up" || random.chance(weather.lostMessage)) {
        cluster.trace?.(`${options.label} stream ${channel} failed to open`);
        this.#emit("error", new TypeError("fetch failed"));
        return;
      }
      this.#open();
    });
  }

  on(type: EventType, listener: Listener): void {
    let set = this.#listeners.get(type);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(type, set);
    }
    set.add(listener);
  }

  async unsubscribe(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    this.cluster.detach(this.options.node, this.#stream);
  }

  #open(): void {
    const { cluster, options } = this;
    cluster.attach(options.node, this.#stream);
    const fate = drawStreamFate(options.fates, cluster.weather);
    this.#notice = fate.notice;
    cluster.trace?.(`${options.label} stream ${options.channel} open`);
    this.#emit("subscribe", 1);
    if (fate.dropAfter === undefined) return;
    cluster.scheduler.after(fate.dropAfter, () => {
      if (!cluster.attached(options.node, this.#stream)) return;
      cluster.detach(options.node, this.#stream);
      cluster.trace?.(`${options.label} stream ${options.channel} dropped`);
      if (fate.notice) this.#emit("error", streamError());
    });
  }

  #emit(type: EventType, data: unknown): void {
    if (this.#closed || this.options.owner?.dead) return;
    for (const listener of this.#listeners.get(type) ?? []) listener(data);
  }
}
