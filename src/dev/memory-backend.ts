/**
 * The `Backend` of an in-memory dev node (see `backend.ts`): the in-process node (`SimNode`, the
 * keyspace and Lua VM the simulation and the parity suite use) on the real wall clock, its pub/sub,
 * and the process controls a redis-server has, modelled in process:
 *
 * - `pause()`: every request (and a new subscription) waits, in arrival order, until `resume()`,
 *   as behind a SIGSTOPped redis-server; a `kill()` meanwhile fails them.
 * - `kill()`: requests fail (the endpoint answers 503) and SSE streams end, until `revive()`.
 * - `revive()`: a new, empty node (no data, no script cache): a restart keeps nothing, there is no
 *   disk to keep it on.
 *
 * Requests run one at a time, to completion: a script, a pipeline and a transaction are each
 * atomic here (a pipeline is not on redis-server, but nothing may rely on it not being).
 *
 * @module
 */

import { createHash } from "node:crypto";
import { SimNode } from "../memory";
import {
  type Backend,
  BackendUnavailableError,
  type Replace,
  type Subscriber,
  type TransactionOutcome,
} from "./backend";
import type { RedisReply } from "./encode";
import { execute, globToRegExp, type MemoryStore, queueError } from "./memory-commands";
import type { ParsedCommand } from "./request";

/** The SHA-1 an EVAL caches its script under (EVALSHA's key), as redis-server computes it. */
const sha1Hex = (source: string): string => createHash("sha1").update(source).digest("hex");

type Listener = (channel: string, message: string, pattern?: string) => void;

/** One subscription of one SSE stream. */
interface Subscription {
  readonly target: string;
  /** For a pattern subscription: its matcher. */
  readonly match: RegExp | undefined;
  readonly deliver: Listener;
  readonly end: () => void;
}

/** An in-process node behind a REST endpoint. */
export class MemoryBackend implements Backend {
  #node = MemoryBackend.#newNode();
  readonly #subscriptions = new Set<Subscription>();
  #state: "running" | "paused" | "killed" | "closed" = "running";
  /** Settles when a pause ends (resume, kill or close). */
  #unpaused: Promise<void> = Promise.resolve();
  #endPause: () => void = () => {};

  static #newNode(): SimNode {
    return new SimNode({ now: () => Date.now(), sha1: sha1Hex });
  }

  /** The store commands run against. */
  get #store(): MemoryStore {
    const node = this.#node;
    node.onPublish = (channel, message) => this.#publish(channel, message);
    return { node, publish: (channel, message) => this.#publish(channel, message) };
  }

  async command(command: ParsedCommand): Promise<RedisReply> {
    await this.#ready();
    return execute(this.#store, command);
  }

  async pipeline(commands: readonly ParsedCommand[], replace?: Replace): Promise<RedisReply[]> {
    await this.#ready();
    const store = this.#store;
    return commands.map((command) => replace?.(command) ?? execute(store, command));
  }

  async transaction(
    commands: readonly ParsedCommand[],
    replace?: Replace,
  ): Promise<TransactionOutcome> {
    await this.#ready();
    const replies = commands.map((command) => replace?.(command));
    // Queued first, as MULTI does: one unknown command or wrong arity discards them all.
    for (const [i, command] of commands.entries()) {
      const error = replies[i] === undefined ? queueError(command) : undefined;
      if (error !== undefined) return { ok: false, error: error.message };
    }
    const store = this.#store;
    return {
      ok: true,
      replies: commands.map((command, i) => replies[i] ?? execute(store, command)),
    };
  }

  subscriber(): Subscriber {
    let subscription: Subscription | undefined;
    let closed = false;
    const listeners: Listener[] = [];
    const ends: Array<() => void> = [];
    const end = (): void => {
      if (closed) return;
      closed = true;
      if (subscription !== undefined) this.#subscriptions.delete(subscription);
      for (const listener of ends.splice(0)) listener();
    };
    return {
      connect: () => this.#ready(),
      subscribe: async (target, pattern) => {
        await this.#ready();
        if (closed) throw new BackendUnavailableError("the subscription was closed");
        subscription = {
          target,
          match: pattern ? globToRegExp(target) : undefined,
          deliver: (channel, message, matched) => {
            for (const listener of listeners) listener(channel, message, matched);
          },
          end,
        };
        this.#subscriptions.add(subscription);
        return 1; // one subscription per stream
      },
      onMessage: (listener) => listeners.push(listener),
      onEnd: (listener) => ends.push(listener),
      disconnect: () => {
        ends.length = 0; // ended by its owner: nobody to tell
        end();
      },
    };
  }

  /** Requests wait from now on until {@link MemoryBackend.resume}. */
  pause(): void {
    if (this.#state !== "running") return;
    this.#state = "paused";
    this.#unpaused = new Promise((resolve) => {
      this.#endPause = resolve;
    });
  }

  /** Lets waiting requests run, in arrival order. */
  resume(): void {
    if (this.#state !== "paused") return;
    this.#state = "running";
    this.#endPause();
  }

  /** Requests fail and subscriptions end until {@link MemoryBackend.revive}. */
  kill(): void {
    if (this.#state === "closed") return;
    this.#state = "killed";
    this.#endPause();
    this.#endSubscriptions();
  }

  /** After a kill: a new, empty node takes requests. */
  revive(): void {
    if (this.#state !== "killed") return;
    this.#node = MemoryBackend.#newNode();
    this.#state = "running";
  }

  close(): void {
    this.#state = "closed";
    this.#endPause();
    this.#endSubscriptions();
  }

  async #ready(): Promise<void> {
    while (this.#state === "paused") await this.#unpaused;
    if (this.#state === "killed") {
      throw new BackendUnavailableError("the in-memory node is killed (restart() brings it back)");
    }
    if (this.#state === "closed") throw new BackendUnavailableError("the node is stopped");
  }

  #publish(channel: string, message: string): number {
    let receivers = 0;
    for (const subscription of this.#subscriptions) {
      const { match, target } = subscription;
      if (match === undefined ? target !== channel : !match.test(channel)) continue;
      receivers++;
      // After the command: a message never reaches a stream from inside a running script.
      queueMicrotask(() => subscription.deliver(channel, message, match && target));
    }
    return receivers;
  }

  #endSubscriptions(): void {
    for (const subscription of [...this.#subscriptions]) subscription.end();
    this.#subscriptions.clear();
  }
}
