/**
 * A memory node: an in-process Redis node for tests that edgelock takes as a `RedisLike` in
 * `createLocks({ nodes })`, with no network and no server. It runs edgelock's own Lua scripts in a
 * Lua VM over an in-memory keyspace with Redis 7's expiry semantics (the node the deterministic
 * simulation runs on, checked against redis-server script by script), and carries the wake-up
 * channels of waiting callers.
 *
 * @module
 */
import { ConfigurationError, checkKnown, shown } from "../errors";
import type { RedisLike, SubscriberLike } from "../node";
import { SENT_SCRIPTS } from "../scripts";
import { type Clock, realClock } from "./clock";
import { MemoryNodeError, UnsupportedCommandError } from "./errors";
import { type Reply, UNKNOWN_COMMAND } from "./keyspace";
import { NOT_MODELLED } from "./lua-redis";
import { Channels } from "./pubsub";
import { type ScriptResult, SimNode } from "./sim-node";

/** Options of {@link memoryNode} and {@link memoryNodes}. */
export interface MemoryNodeOptions {
  /**
   * The time the node's keys expire by ({@link manualClock} to move it from the test).
   * @default realClock (`Date.now()`)
   */
  readonly clock?: Clock | undefined;
}

const KNOWN = new Set(["clock"]);
const UNKNOWN = new RegExp(`unknown command '([^']*)' ${UNKNOWN_COMMAND.replace(/[()]/g, "\\$&")}`);
const UNMODELLED = new RegExp(`${NOT_MODELLED} '([^']*)'`);

/** The error to throw for an error reply `message`. */
function replyError(message: string): MemoryNodeError {
  const command = UNKNOWN.exec(message)?.[1] ?? UNMODELLED.exec(message)?.[1];
  return command === undefined
    ? new MemoryNodeError(message)
    : new UnsupportedCommandError(command, message);
}

function unwrap(result: ScriptResult): unknown {
  if (!result.ok) throw replyError(result.error);
  return result.value;
}

/** A command's reply as a client sees it (a status as its text). */
function toClient(reply: Reply): unknown {
  if (Array.isArray(reply)) return reply.map(toClient);
  if (reply !== null && typeof reply === "object") {
    if ("err" in reply) throw replyError(reply.err);
    return reply.ok;
  }
  return reply;
}

/**
 * One memory node. Pass it (or several: {@link memoryNodes}) as `nodes` to `createLocks`, or to
 * any edgelock API that takes nodes. `eval` and `evalsha` are what edgelock calls; the other
 * methods let a test look at what the node holds.
 *
 * What it models: the keyspace, key expiry, the script cache (EVALSHA of a script it has not seen
 * answers NOSCRIPT), scripts running atomically with time frozen at their start, error replies,
 * and PUBLISH to the waiters that `wake: true` subscribes; a script of the user's own runs as in
 * Redis 7's Lua 5.1 (numbers, protected globals, `redis.*`, `cjson`, error texts). What it does
 * not: persistence, a restart with data, memory limits and eviction, replication, latency, any
 * command edgelock's scripts do not call and `redis.sha1hex` ({@link UnsupportedCommandError}). Its nodes never fail: for faults, use
 * the dev cluster (`edgelock/dev`).
 *
 * @example
 * const node = memoryNode();
 * const locks = createLocks({ nodes: [node] });
 * await locks.acquire("job", { lease: 5_000 });
 * node.pttl("lock:job"); // 5000 (or a little less on the real clock)
 */
export class MemoryNode implements RedisLike {
  readonly #node: SimNode;
  readonly #channels = new Channels();
  /** SHA-1 of each other source seen: hashed once per source (WebCrypto), not per call. */
  readonly #shas = new Map<string, string>();

  /** @throws {ConfigurationError} naming an unknown option or a `clock` without `now()` */
  constructor(options: MemoryNodeOptions = {}) {
    checkKnown(options, KNOWN, "memoryNode");
    const clock = options.clock ?? realClock;
    if (typeof clock !== "object" || clock === null || typeof clock.now !== "function") {
      throw new ConfigurationError("clock", "expected an object with now() (epoch ms)");
    }
    this.#node = new SimNode({
      // Redis's clock is whole milliseconds: a fractional clock would give fractional PTTLs.
      now: () => Math.floor(clock.now()),
      onPublish: (channel, message) => this.#channels.publish(channel, message),
    });
  }

  /**
   * EVAL: run `script` (Lua source) with `keys` and `args`, and cache it for EVALSHA.
   * @throws {MemoryNodeError} the script's error reply
   * @throws {UnsupportedCommandError} the script called a command the node does not implement
   */
  async eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    const source = String(script);
    // edgelock's scripts carry their SHA-1 (the library records what it sends: `SENT_SCRIPTS`),
    // so their EVAL runs at once, on every node of a quorum before the caller's round resolves (as
    // a test reading the nodes right after expects), whichever of edgelock's rooms sent it; only a
    // script of the user's own waits for WebCrypto.
    const sha = SENT_SCRIPTS.get(source) ?? (await this.#sha1(source));
    return unwrap(this.#node.eval(source, keys.map(String), args.map(String), sha));
  }

  /**
   * EVALSHA: run the script cached under `sha1`.
   * @throws {MemoryNodeError} `NOSCRIPT No matching script. Please use EVAL.` for a script this
   *   node has not seen (since {@link MemoryNode.flushScripts}), or the script's error reply
   */
  async evalsha(sha1: string, keys: string[], args: string[]): Promise<unknown> {
    return unwrap(this.#node.evalsha(String(sha1), keys.map(String), args.map(String)));
  }

  /**
   * Listen on `channel`: what `wake: true` uses to hear a release at once instead of at its next
   * poll. Messages arrive in a microtask after the script that published them.
   */
  subscribe(channel: string): SubscriberLike {
    return this.#channels.subscribe(channel);
  }

  /**
   * Run one command outside any script, synchronously, e.g. `["SET", "k", "v", "PX", "100"]` (a
   * status comes back as its text, `"OK"`; a nil as `null`).
   * @throws {UnsupportedCommandError} naming a command the node does not implement
   * @throws {MemoryNodeError} any other error reply (wrong type, syntax)
   */
  command(argv: readonly string[]): unknown {
    return toClient(this.#node.command(argv.map(String)));
  }

  /** Remaining time to live of `key` in ms at the node's clock: -2 absent, -1 no expiry. */
  pttl(key: string): number {
    return this.#node.pttl(key);
  }

  /** The string value of `key`, or `null` when it is absent or not a string. */
  get(key: string): string | null {
    return this.#node.get(key);
  }

  /** The keys that exist at the node's clock, sorted. */
  keys(): string[] {
    return this.#node.keys();
  }

  async #sha1(source: string): Promise<string> {
    let sha = this.#shas.get(source);
    if (sha === undefined) {
      const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(source));
      sha = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
      this.#shas.set(source, sha);
    }
    return sha;
  }

  /** SCRIPT FLUSH: forget every cached script, so the next EVALSHA answers NOSCRIPT. */
  flushScripts(): void {
    this.#node.restart(true);
  }
}

/**
 * One memory node (see {@link MemoryNode}).
 *
 * @param options.clock default {@link realClock}
 * @throws {ConfigurationError} naming an unknown option or a bad `clock`
 * @example
 * const locks = createLocks({ nodes: [memoryNode()] });
 */
export function memoryNode(options: MemoryNodeOptions = {}): MemoryNode {
  return new MemoryNode(options);
}

/**
 * `count` independent memory nodes (a quorum of `count`; each has its own keyspace), all reading
 * the same clock.
 *
 * @param count an integer ≥ 1 (an odd number, as for real nodes)
 * @param options.clock default {@link realClock}
 * @throws {ConfigurationError} naming `count`, an unknown option or a bad `clock`
 * @example
 * const clock = manualClock();
 * const nodes = memoryNodes(3, { clock });
 * const locks = createLocks({ nodes });
 */
export function memoryNodes(count: number, options: MemoryNodeOptions = {}): MemoryNode[] {
  if (typeof count !== "number" || !Number.isSafeInteger(count) || count < 1) {
    throw new ConfigurationError(
      "count",
      `expected an integer >= 1, got ${typeof count === "string" ? JSON.stringify(count) : shown(count)}`,
    );
  }
  return Array.from({ length: count }, () => new MemoryNode(options));
}
