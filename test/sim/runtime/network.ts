/**
 * The simulated network between one client and one node: {@link SimRedis} has the library's node
 * interface (`RedisLike` plus `subscribe`, as `@upstash/redis` offers), and every request through
 * it meets a seeded fate (see `fates.ts`) on its way to the node and back. A request runs on the
 * node, atomically, at the virtual time it arrives there.
 *
 * Failures look as `@upstash/redis` reports them, since that is what the library classifies
 * (src/node/classify.ts): a node's error is an `UpstashError`; a broken connection a `TypeError`
 * "fetch failed" (a network error, which the library re-sends once); a lost request or reply
 * without a reset never settles (the library's own timeout races it).
 *
 * @module
 */

import type { RedisLike, SubscriberLike } from "../../../src/node/types";
import { type Owner, SimCluster } from "./cluster";
import { drawFate } from "./fates";
import type { Random } from "./random";
import { SimSubscriber } from "./subscriber";

/** Options of {@link SimRedis}. */
export interface LinkOptions {
  /** The client's number (names its random streams: `link:<client>:<node>`). */
  readonly client: number;
  /** The node's index in the cluster. */
  readonly node: number;
  readonly owner?: Owner | undefined;
}

/** A node request's error as `@upstash/redis` raises it (an `UpstashError`). */
export function serverError(message: string): Error {
  const error = new Error(message);
  error.name = "UpstashError";
  return error;
}

/** A broken connection, as fetch reports it (the library classifies it as a network error). */
export const connectionError = (): Error => new TypeError("fetch failed");

type Run = () => { ok: true; value: unknown } | { ok: false; error: string };

/**
 * @example
 * const redis = new SimRedis(cluster, { client: 0, node: 2 });
 * await redis.evalsha(ACQUIRE.sha1, keys, args); // rejects with an UpstashError "NOSCRIPT ..."
 */
export class SimRedis implements RedisLike {
  /** Fates of this link's requests (and, for the schedules found with it, its streams' opening). */
  readonly random: Random;
  readonly #label: string;

  constructor(
    private readonly cluster: SimCluster,
    private readonly options: LinkOptions,
  ) {
    this.random = cluster.random.split(`link:${options.client}:${options.node}`);
    this.#label = `c${options.client}>n${options.node}`;
  }

  evalsha(sha1: string, keys: string[], args: string[]): Promise<unknown> {
    const { cluster, options } = this;
    return this.#request(`evalsha ${cluster.scriptName(sha1)}`, [...keys, ...args], () =>
      cluster.evalsha(options.node, sha1, keys, args),
    );
  }

  eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    const { cluster, options } = this;
    return this.#request(`eval ${cluster.scriptName(script)}`, [...keys, ...args], () =>
      cluster.eval(options.node, script, keys, args),
    );
  }

  /** Open a wake-up stream on this node (see `subscriber.ts`). */
  subscribe(channel: string): SubscriberLike {
    const { cluster, options } = this;
    return new SimSubscriber(cluster, {
      node: options.node,
      channel,
      random: this.random,
      fates: cluster.random.split(`stream:${options.client}:${options.node}`),
      messages: cluster.random.split(`messages:${options.client}:${options.node}`),
      owner: options.owner,
      label: this.#label,
    });
  }

  #request(what: string, keys: string[], run: Run): Promise<unknown> {
    const { cluster } = this;
    const { scheduler, trace } = cluster;
    const owner = this.options.owner;
    const label = this.#label;
    // Drawn now, in the order of the link's requests: the draws of a link never depend on what
    // other links or the nodes do.
    const drawn = drawFate(this.random, cluster.weather);
    // A constructed delay (named regressions) replaces the drawn one; the draws stay the same.
    const lateBy = cluster.lateBy(this.options.node);
    const late = lateBy === undefined ? drawn : { ...drawn, toNode: lateBy };
    // A cut link (named regressions) refuses the connection: the node never sees the request.
    const fate = cluster.cut(this.options.client, this.options.node)
      ? { ...late, outcome: "lost" as const, reset: true }
      : late;
    trace?.(`${label} ${what} ${keys.join(" ")} fate=${fate.outcome}/${fate.toNode}/${fate.back}`);
    return new Promise((resolve, reject) => {
      // A dead client's code must never run again (its realm may serve another client now).
      const fail = (error: Error) => {
        if (owner?.dead) return;
        trace?.(`${label} ${what} failed: ${error.name} ${error.message}`);
        reject(error);
      };
      if (fate.outcome === "lost") {
        if (fate.reset) scheduler.after(fate.toNode, () => fail(connectionError()));
        return;
      }
      const refuse = () => scheduler.after(fate.back, () => fail(connectionError()));
      const execute = () => {
        if (fate.outcome === "error") {
          scheduler.after(fate.back, () => fail(serverError("ERR simulated server error")));
          return;
        }
        const result = run();
        trace?.(`${label} ${what} ran: ${result.ok ? JSON.stringify(result.value) : result.error}`);
        if (fate.outcome === "unheard") {
          if (fate.reset) refuse();
          return;
        }
        scheduler.after(fate.back, () => {
          if (!result.ok) fail(serverError(result.error));
          else if (!owner?.dead) resolve(result.value);
        });
      };
      scheduler.after(fate.toNode, () =>
        cluster.arrive(this.options.node, { run: execute, refuse }),
      );
    });
  }
}

/**
 * The nodes of a schedule ({@link SimCluster}) plus the clients' links to them.
 *
 * @example
 * const net = new SimNetwork(scheduler, random.split("net"), clocks, WEATHERS.faulty);
 * const nodes = [0, 1, 2].map((n) => net.link(client.id, n, client));
 * client.lib.createLocks({ nodes });
 */
export class SimNetwork extends SimCluster {
  /**
   * Client `client`'s connection to node `index`, with its own random stream of fates. `owner`
   * (the client): once it is dead, nothing reaches its code any more (no reply, no wake-up), so
   * its pooled realm can serve the next client.
   */
  link(client: number, index: number, owner?: Owner): SimRedis {
    this.host(index);
    return new SimRedis(this, { client, node: index, owner });
  }
}
