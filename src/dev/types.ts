/**
 * Public types of the dev cluster (`edgelock/dev`): options, the running cluster, one node's controls
 * and the faults a node can inject. Implementation lives in `cluster.ts` and `node.ts`.
 *
 * @module
 */

/**
 * Options of {@link startDevCluster}.
 *
 * @example
 * ```ts
 * const cluster = await startDevCluster({ nodes: 3, persistence: "aof" });
 * ```
 */
export interface DevClusterOptions {
  /**
   * What runs each node. `"redis"`: a redis-server child process (needs `redis-server` ≥ 7 and the
   * optional package `ioredis`). `"memory"`: an in-memory node in this process, nothing to install
   * (edgelock's Lua scripts on a Redis 7 keyspace, kept equal to redis-server by the parity suite;
   * it has no durability, restarts empty, has no memory limit or eviction, and implements only the
   * commands edgelock and its samples use: any other gets `ERR unknown command '<name>' …`).
   * `"auto"`: redis when redis-server is on PATH and ioredis is installed, else memory; AOF
   * persistence or `redisServer` mean redis. `cluster.backend` says which one runs.
   * @default "auto"
   */
  backend?: "auto" | "redis" | "memory";
  /** Number of independent node + REST endpoint pairs. @default 3 */
  nodes?: number;
  /**
   * `"none"`: no disk at all (`--save "" --appendonly no`). `"aof"`: `appendonly yes` with
   * `appendfsync always` in a temporary directory, so `restart({ keepData: true })` keeps every
   * acknowledged write. Needs redis-server. @default "none"
   */
  persistence?: "none" | "aof";
  /** Interface that both redis-server and the REST endpoints bind to. @default "127.0.0.1" */
  host?: string;
  /** REST port of node 0; node i listens on `port + i`. `0` picks free ephemeral ports. @default 0 */
  port?: number;
  /** Request bodies above this size get 413 `{"error":"ERR max request size exceeded"}`. @default 10 MiB */
  maxBodyBytes?: number;
  /** Path of the redis-server binary (backend redis). @default the `redis-server` found on PATH */
  redisServer?: string;
  /**
   * Seed of the per-node pseudo-random generator behind latency ranges (node i uses `seed + i`), so a
   * run with faults is reproducible. Not part of the team contract; an addition. @default 1
   */
  seed?: number;
}

/** Connection settings of one node: what `@upstash/redis` or `createLocks` take. */
export interface DevNodeConfig {
  /** `http://<host>:<port>` of the node's REST endpoint. */
  readonly url: string;
  /** The node's REST token (random, 128 bits, hex). */
  readonly token: string;
}

/**
 * A running dev cluster returned by {@link startDevCluster}.
 *
 * @example
 * ```ts
 * const cluster = await startDevCluster();
 * const redis = new Redis(cluster.nodes[0]); // @upstash/redis
 * afterAll(() => cluster.stop());
 * ```
 */
export interface DevCluster {
  /** What runs the nodes: redis-server processes, or in-memory nodes in this process. */
  readonly backend: "redis" | "memory";
  /**
   * Why: `"asked for"`, `"found on PATH"` (redis), `"no redis-server found on PATH"` or
   * `"ioredis is not installed"` (memory, with backend `"auto"`).
   */
  readonly backendReason: string;
  /** `{ url, token }` per node; pass to `new Redis(...)` or `createLocks({ nodes })`. */
  readonly nodes: ReadonlyArray<DevNodeConfig>;
  /** Fault and process controls, in the same order as `nodes`. */
  readonly controls: ReadonlyArray<DevNode>;
  /** Stops every endpoint and kills every redis-server it started (or drops every in-memory node). Idempotent. */
  stop(): Promise<void>;
}

/** Options of {@link DevNode.restart}. */
export interface RestartOptions {
  /** Time between the kill and the new store, during which the endpoint answers 5xx. @default 0 */
  delayMs?: number;
  /**
   * Keep the data across the restart; needs `persistence: "aof"` (so redis-server: an in-memory
   * node always restarts empty). @default persistence === "aof"
   */
  keepData?: boolean;
}

/** Counters of one node's REST endpoint since start or the last `resetStats()`. */
export interface NodeStats {
  /**
   * HTTP requests received on the data routes (`/`, `/pipeline`, `/multi-exec`, and the SSE and
   * publish routes: one per stream), any outcome.
   */
  requests: number;
  /** Commands received per lower-case name, counted once the request was authorized and parsed. */
  commands: Record<string, number>;
}

/**
 * Controls of one node of a {@link DevCluster}.
 *
 * @example
 * ```ts
 * const node = cluster.controls[1];
 * node.inject({ kind: "reset-after", command: "set", count: 1 }); // the SET runs, the reply is lost
 * node.pause(); // requests stall …
 * node.resume(); // … and complete
 * await node.restart({ delayMs: 500 }); // 503 for ~500 ms, then an empty node
 * expect(node.stats().commands.evalsha).toBe(2);
 * ```
 *
 * On an in-memory node the same controls are modelled in process: `pause()` holds requests back
 * until `resume()`, `kill()` makes the endpoint answer 503 and ends SSE streams, `restart()` comes
 * back with an empty node (no data, no script cache).
 */
export interface DevNode {
  /** Position of the node in `cluster.nodes`. */
  readonly index: number;
  /** What runs this node (as `cluster.backend`). */
  readonly backend: "redis" | "memory";
  /** `http://<host>:<port>` of the REST endpoint. */
  readonly url: string;
  /** The REST token of this node. */
  readonly token: string;
  /**
   * `redis://<host>:<redisPort>`: talk to the redis-server directly in assertions. An in-memory
   * node has no such port: `memory://node-<index>`, which no Redis client can connect to.
   */
  readonly redisUrl: string;
  /** Adds a fault (FIFO; the first matching active fault applies to a request). */
  inject(fault: Fault): void;
  /** Removes every fault. */
  clearFaults(): void;
  /** SIGSTOPs the redis-server (memory: holds requests back): requests stall until {@link DevNode.resume}. */
  pause(): void;
  /** SIGCONTs a paused redis-server (memory: lets the held requests run, in order). No-op when it is not paused. */
  resume(): void;
  /** SIGKILLs the redis-server (memory: drops the node); the endpoint answers 5xx JSON until a restart. */
  kill(): Promise<void>;
  /** Kills and restarts the store on the same port; resolves once requests work again. Memory: empty. */
  restart(opts?: RestartOptions): Promise<void>;
  /** Requests and commands seen by the endpoint. */
  stats(): NodeStats;
  /** Sets every counter back to zero. */
  resetStats(): void;
}

/**
 * A fault injected into one node's REST endpoint. `command` restricts it to requests containing
 * that command (any case); `count` makes it apply to the next N matching requests only (default:
 * until cleared).
 *
 * - `latency`: waits `ms` (or a seeded random value in `[min, max]`) then runs the request normally,
 *   even if the client gave up meanwhile (like a server that already received the request).
 * - `status`: answers `status` without running anything; body `{"error":"ERR injected fault"}`, or
 *   `body` as raw text.
 * - `hang`: never answers; the socket is released when the client disconnects.
 * - `reset-before`: destroys the socket without running the request.
 * - `reset-after`: runs the request on Redis, then destroys the socket instead of answering.
 * - `noscript`: every `EVALSHA`/`EVALSHA_RO` of the request answers
 *   `NOSCRIPT No matching script. Please use EVAL.` without running; the other commands run.
 *   Without `command` it only matches requests that contain an `EVALSHA`/`EVALSHA_RO`.
 *
 * @example
 * ```ts
 * cluster.controls[1].inject({ kind: "noscript", command: "evalsha", count: 3 });
 * cluster.controls[2].inject({ kind: "latency", ms: [20, 80] });
 * ```
 */
export type Fault = { command?: string; count?: number } & (
  | { kind: "latency"; ms: number | readonly [min: number, max: number] }
  | { kind: "status"; status: number; body?: string }
  | { kind: "hang" }
  | { kind: "reset-before" }
  | { kind: "reset-after" }
  | { kind: "noscript" }
);
