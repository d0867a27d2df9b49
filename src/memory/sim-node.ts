/**
 * An in-memory Redis node, synchronous: the keyspace, the script cache (EVALSHA answers NOSCRIPT
 * for a script it has not seen since its last restart), PUBLISH and TIME, on a clock it is given.
 * Scripts run atomically with time frozen at their start, as in Redis. The deterministic
 * simulation runs its nodes on it (each on a drifting clock of its own), and so do the memory nodes
 * users test against;
 * `test/sim/node/parity.test.ts` runs the same script cases here and on a real redis-server.
 *
 * @module
 */

import { Keyspace, type Reply } from "./keyspace";
import { DEFAULT_TIME_LIMIT_MS, LuaBridge, type ScriptResult } from "./lua-bridge";
import { Rand48 } from "./lua-random";

export type { ScriptResult } from "./lua-bridge";

/** Options of {@link SimNode}. */
export interface SimNodeOptions {
  /**
   * The node's clock (epoch ms): what its keys expire by and what TIME reads. Scripts read it once,
   * when they start.
   */
  readonly now: () => number;
  /**
   * Called for each PUBLISH a script makes; returns how many subscribers receive it (PUBLISH's
   * reply: a hand-off is made only to a waiter someone listens for).
   */
  onPublish?: ((channel: string, message: string) => number) | undefined;
  /**
   * A synchronous SHA-1 (hex) of a script's source, for an EVAL that does not say the SHA-1 to
   * cache the script under. The platforms' own SHA-1 (WebCrypto) is asynchronous, so callers that
   * can await pass the SHA-1 to {@link SimNode.eval} instead (as {@link MemoryNode} does), and
   * Node-only callers (the simulation, the dev cluster) pass `node:crypto`'s here.
   */
  readonly sha1?: ((source: string) => string) | undefined;
  /**
   * How long (ms of real time) a script may run before the node stops it with the error
   * redis-server gives a script stopped by `SCRIPT KILL`.
   * @default 5000 (Redis's `lua-time-limit`)
   */
  readonly scriptTimeLimitMs?: number | undefined;
}

const NOSCRIPT = "NOSCRIPT No matching script. Please use EVAL.";

/**
 * One Lua state for every node: scripts run synchronously and keep nothing between calls (KEYS,
 * ARGV and the keyspace are set per call, and every table a script could write for the next one —
 * the globals, the libraries — is read-only, as in Redis 7), so each node is its own sandbox as
 * far as a script can tell; compiling each script once instead of per node and schedule saves a
 * tenth of a campaign's time.
 */
let shared: LuaBridge | undefined;
const sharedBridge = (): LuaBridge => {
  shared ??= new LuaBridge();
  return shared;
};

/**
 * @example
 * const node = new SimNode({ now: () => scheduler.now });
 * node.eval(ACQUIRE.lua, keys, [token, "1000", "0"]); // { ok: true, value: [1, 0] }
 */
export class SimNode {
  onPublish: ((channel: string, message: string) => number) | undefined;
  readonly #now: () => number;
  readonly #sha1: ((source: string) => string) | undefined;
  readonly #timeLimitMs: number;
  readonly #space = new Keyspace();
  /** `math.random`'s generator: one per node, as one per redis-server. */
  readonly #random = new Rand48();
  readonly #bridge = sharedBridge();
  /** Script sources loaded since the last restart, by SHA-1. */
  readonly #scripts = new Map<string, string>();
  /** SHA-1 of each source seen (hashing once per source, not per call). */
  readonly #shas = new Map<string, string>();

  constructor(options: SimNodeOptions) {
    this.#now = options.now;
    this.#sha1 = options.sha1;
    this.#timeLimitMs = options.scriptTimeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
    this.onPublish = options.onPublish;
  }

  evalsha(sha: string, keys: readonly string[], args: readonly string[]): ScriptResult {
    const source = this.#scripts.get(sha);
    if (source === undefined) return { ok: false, error: NOSCRIPT };
    return this.#run(source, keys, args, sha);
  }

  /**
   * EVAL: run `source` and cache it under `sha` (its SHA-1, or for a mutant the SHA-1 of the
   * script it stands in for); without `sha`, under the SHA-1 of the `sha1` option.
   * @throws {TypeError} when neither `sha` nor the `sha1` option is given
   */
  eval(
    source: string,
    keys: readonly string[],
    args: readonly string[],
    sha?: string,
  ): ScriptResult {
    let cached = sha ?? this.#shas.get(source);
    if (cached === undefined) {
      if (this.#sha1 === undefined) {
        throw new TypeError("SimNode.eval: pass the script's SHA-1, or a sha1 option");
      }
      cached = this.#sha1(source);
      this.#shas.set(source, cached);
    }
    this.#scripts.set(cached, source);
    return this.#run(source, keys, args, cached);
  }

  /** Whether EVALSHA `sha` would find its script (loaded since the last restart). */
  knows(sha: string): boolean {
    return this.#scripts.has(sha);
  }

  /** Restart: the script cache is emptied; the data too unless `keepData`. */
  restart(keepData: boolean): void {
    this.#scripts.clear();
    this.#random.reset();
    if (!keepData) this.#space.clear();
  }

  keys(): string[] {
    return this.#space.keys(this.#now());
  }

  get(key: string): string | null {
    const value = this.#space.lookup(key, this.#now());
    return value?.type === "string" ? value.value : null;
  }

  type(key: string): "string" | "hash" | "zset" | "none" {
    return this.#space.lookup(key, this.#now())?.type ?? "none";
  }

  pttl(key: string): number {
    return this.#space.pttl(key, this.#now());
  }

  zrange(key: string): Array<[string, number]> {
    return this.#space.sorted(key, this.#now());
  }

  /** One command outside any script (test setup), e.g. `["ZADD", room, "100", member]`. */
  command(argv: readonly string[]): Reply {
    return this.#command(this.#now(), [...argv]);
  }

  /** Direct write for test setup (SET key value [PX ms]). */
  set(key: string, value: string, pxMs?: number): void {
    const argv = pxMs === undefined ? ["SET", key, value] : ["SET", key, value, "PX", String(pxMs)];
    this.#space.command(this.#now(), argv);
  }

  /**
   * One script, with one reading of the clock for all of it. Redis 7 freezes the time keys expire
   * by at the script's start too, but its TIME inside a script reads the clock again; here TIME
   * answers that same start reading. A script cannot tell the two apart except by running long
   * enough for the clock to move (a memory node's scripts take microseconds), and none of
   * edgelock's scripts could rely on the difference: they may read TIME only as the node's time
   * at the script's start, which both give.
   */
  #run(
    source: string,
    keys: readonly string[],
    args: readonly string[],
    sha: string,
  ): ScriptResult {
    const now = this.#now(); // frozen for the whole script
    const host = {
      command: (argv: string[]) => this.#command(now, argv),
      random: this.#random,
      sha1: this.#sha1,
      timeLimitMs: this.#timeLimitMs,
    };
    return this.#bridge.run(source, keys, args, host, sha);
  }

  #command(now: number, argv: string[]): Reply {
    const name = argv[0]?.toUpperCase();
    if (name === "TIME") {
      // {seconds, microseconds} as text (a clock of whole milliseconds: microseconds end in 000).
      if (argv.length > 1) return { err: "ERR wrong number of arguments for 'time' command" };
      return [String(Math.floor(now / 1_000)), String(Math.floor((now % 1_000) * 1_000))];
    }
    if (name === "PUBLISH") {
      if (argv.length !== 3) return { err: "ERR wrong number of arguments for 'publish'" };
      return this.onPublish?.(argv[1] as string, argv[2] as string) ?? 0;
    }
    return this.#space.command(now, argv);
  }
}
