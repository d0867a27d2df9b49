/**
 * The simulated network between clients and nodes: each client gets, per node, an object with the
 * library's node interface (`RedisLike` plus `subscribe`, as `@upstash/redis` offers), and every
 * request through it meets a seeded fate (see `fates.ts`) on its way to the node and back. Nodes
 * can be paused (requests wait), killed (connections refused) and restarted with or without their
 * data; streams drop when their node goes down. Wipes are recorded for the checker.
 *
 * @module
 */

import type { RedisLike, SubscriberLike } from "../../../src/node/types";
import { SCRIPTS } from "../../../src/scripts";
import type { Wipe } from "../../safety/harness/history";
import { type ScriptResult, SimNode } from "../node/sim-node";
import { drawFate, type Weather } from "./fates";
import type { Random } from "./random";
import type { Scheduler } from "./scheduler";

type Listener = (data: unknown) => void;

interface Subscription {
  readonly channel: string;
  readonly emit: (type: "subscribe" | "message" | "error", data: unknown) => void;
}

interface Host {
  readonly node: SimNode;
  state: "up" | "paused" | "down";
  /** Requests that arrived while paused: run on resume, refused on kill. */
  pending: Array<{ run: () => void; refuse: () => void }>;
  readonly streams: Set<Subscription>;
  /** Fates of the wake-up messages this node sends. */
  readonly random: Random;
}

/** A node request's error as `@upstash/redis` raises it (an `UpstashError`). */
function serverError(message: string): Error {
  const error = new Error(message);
  error.name = "UpstashError";
  return error;
}

/** A broken connection, as fetch reports it. */
const connectionError = () => new TypeError("fetch failed");

const SHA_OF = new Map(SCRIPTS.map((s) => [s.lua, s.sha1]));

/**
 * @example
 * const net = new SimNetwork(scheduler, random, 3, WEATHERS.faulty);
 * const nodes = [0, 1, 2].map((i) => net.link(clientId, i));
 */
export class SimNetwork {
  readonly hosts: Host[];
  readonly wipes: Wipe[] = [];

  constructor(
    private readonly scheduler: Scheduler,
    private readonly random: Random,
    count: number,
    private readonly weather: Weather,
    /** Lua to run instead of a script, by its SHA-1 (mutants). */
    private readonly overrides: ReadonlyMap<string, string> = new Map(),
  ) {
    this.hosts = Array.from({ length: count }, (_, i) => {
      const host: Host = {
        node: new SimNode({ now: () => scheduler.now }),
        state: "up",
        pending: [],
        streams: new Set(),
        random: random.split(`publish:${i}`),
      };
      host.node.onPublish = (channel, message) => this.#publish(host, channel, message);
      return host;
    });
  }

  /** Client `client`'s view of node `index`. */
  link(client: number, index: number): RedisLike & { subscribe(channel: string): SubscriberLike } {
    const random = this.random.split(`link:${client}:${index}`);
    const host = this.hosts[index] as Host;
    const request = (run: (node: SimNode) => ScriptResult) => this.#request(host, random, run);
    return {
      evalsha: (sha, keys, args) =>
        request((node) => {
          const mutant = this.overrides.get(sha);
          if (mutant === undefined || !node.knows(sha)) return node.evalsha(sha, keys, args);
          return node.eval(mutant, keys, args, sha);
        }),
      eval: (source, keys, args) =>
        request((node) => {
          const sha = SHA_OF.get(source);
          const mutant = sha === undefined ? undefined : this.overrides.get(sha);
          return mutant === undefined
            ? node.eval(source, keys, args)
            : node.eval(mutant, keys, args, sha);
        }),
      subscribe: (channel) => this.#subscribe(host, random, channel),
    };
  }

  pause(index: number): void {
    const host = this.hosts[index] as Host;
    if (host.state === "up") host.state = "paused";
  }

  resume(index: number): void {
    const host = this.hosts[index] as Host;
    if (host.state !== "paused") return;
    host.state = "up";
    const pending = host.pending;
    host.pending = [];
    for (const p of pending) p.run();
  }

  /** Kill node `index` and bring it back after `downMs`, with its data or empty. */
  restart(index: number, keepData: boolean, downMs: number): void {
    const host = this.hosts[index] as Host;
    const at = this.scheduler.now;
    host.state = "down";
    const pending = host.pending;
    host.pending = [];
    for (const p of pending) p.refuse();
    host.streams.clear();
    this.scheduler.after(downMs, () => {
      host.node.restart(keepData);
      host.state = "up";
      if (!keepData) this.wipes.push({ node: index, at, backAt: this.scheduler.now });
    });
  }

  #request(host: Host, random: Random, run: (node: SimNode) => ScriptResult): Promise<unknown> {
    const { scheduler } = this;
    const fate = drawFate(random, this.weather);
    return new Promise((resolve, reject) => {
      if (fate.outcome === "lost") {
        if (fate.reset) scheduler.after(fate.toNode, () => reject(connectionError()));
        return;
      }
      const refuse = () => scheduler.after(fate.back, () => reject(connectionError()));
      const execute = () => {
        if (fate.outcome === "error") {
          scheduler.after(fate.back, () => reject(serverError("ERR simulated server error")));
          return;
        }
        const result = run(host.node);
        if (fate.outcome === "unheard") {
          if (fate.reset) refuse();
          return;
        }
        scheduler.after(fate.back, () =>
          result.ok ? resolve(result.value) : reject(serverError(result.error)),
        );
      };
      scheduler.after(fate.toNode, () => {
        if (host.state === "down") refuse();
        else if (host.state === "paused") host.pending.push({ run: execute, refuse });
        else execute();
      });
    });
  }

  #subscribe(host: Host, random: Random, channel: string): SubscriberLike {
    const listeners = new Map<string, Listener[]>();
    const emit = (type: "subscribe" | "message" | "error", data: unknown) => {
      for (const listener of listeners.get(type) ?? []) listener(data);
    };
    const stream: Subscription = { channel, emit };
    let closed = false;
    const [min, max] = this.weather.delay;
    this.scheduler.after(random.int(min, max), () => {
      if (closed) return;
      if (host.state !== "up" || random.chance(this.weather.lostMessage)) {
        emit("error", connectionError());
        return;
      }
      host.streams.add(stream);
      emit("subscribe", 1);
    });
    return {
      on: (type, listener) => {
        listeners.set(type, [...(listeners.get(type) ?? []), listener]);
      },
      unsubscribe: async () => {
        closed = true;
        host.streams.delete(stream);
      },
    };
  }

  #publish(host: Host, channel: string, message: string): void {
    const { random } = host;
    for (const stream of host.streams) {
      if (stream.channel !== channel || random.chance(this.weather.lostMessage)) continue;
      const [min, max] = this.weather.delay;
      this.scheduler.after(random.int(min, max), () => {
        if (host.streams.has(stream)) stream.emit("message", { channel, message });
      });
    }
  }
}
