/**
 * `startDevCluster()`: N independent nodes on loopback — redis-servers, or in-memory nodes in this
 * process — each behind its own Upstash-compatible REST endpoint with its own token, plus the
 * guarantees that nothing outlives the cluster (`stop()`, exit and signal hooks, a watchdog for a
 * SIGKILLed parent).
 *
 * @module
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isPlainObject } from "../errors";
import { registerEmergencyStop, Watchdog } from "./cleanup";
import type { BackendKind } from "./engine";
import { DevClusterError, kindOf, RedisServerNotFoundError } from "./errors";
import { LocalNode } from "./node";
import { ioredisAvailable, loadEngine } from "./optional";
import { findRedisServer } from "./redis-process";
import type { DevCluster, DevClusterOptions } from "./types";

const DEFAULTS = Object.freeze({
  nodes: 3,
  persistence: "none",
  host: "127.0.0.1",
  port: 0,
  maxBodyBytes: 10 * 1024 * 1024,
  seed: 1,
  backend: "auto",
} as const);

const MAX_NODES = 64;

function invalid(option: string, requirement: string, value: unknown): never {
  throw new DevClusterError(
    `startDevCluster: option "${option}" must be ${requirement} (got ${JSON.stringify(value)})`,
  );
}

const KNOWN = new Set([...Object.keys(DEFAULTS), "redisServer"]);

function validate(options: DevClusterOptions): Required<Omit<DevClusterOptions, "redisServer">> {
  // Only `undefined` means "the defaults": `null`, a number or an array is a mistake.
  if (!isPlainObject(options)) {
    throw new DevClusterError(
      `startDevCluster: "options" must be a plain object (got ${kindOf(options)})`,
    );
  }
  // Symbol keys too: no option is one, and skipping them would hide the mistake.
  for (const key of Reflect.ownKeys(options)) {
    const name = String(key);
    if (typeof key === "symbol" || !KNOWN.has(name)) {
      throw new DevClusterError(
        `startDevCluster: unknown option "${name}" (known: ${[...KNOWN].join(", ")})`,
      );
    }
  }
  const { nodes, persistence, host, port, maxBodyBytes, seed, backend } = {
    ...DEFAULTS,
    ...options,
  };
  if (backend !== "auto" && backend !== "redis" && backend !== "memory") {
    invalid("backend", '"auto", "redis" or "memory"', backend);
  }
  if (backend === "memory" && persistence === "aof") {
    throw new DevClusterError(
      'startDevCluster: option "persistence" "aof" needs redis-server (backend "redis"); an in-memory node keeps nothing on disk',
    );
  }
  if (backend === "memory" && options.redisServer !== undefined) {
    throw new DevClusterError(
      'startDevCluster: option "redisServer" is for backend "redis", not "memory"',
    );
  }
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > MAX_NODES) {
    invalid("nodes", `an integer from 1 to ${MAX_NODES}`, nodes);
  }
  if (persistence !== "none" && persistence !== "aof")
    invalid("persistence", '"none" or "aof"', persistence);
  if (typeof host !== "string" || host === "") invalid("host", "a non-empty string", host);
  if (!Number.isInteger(port) || port < 0 || port + nodes - 1 > 65_535) {
    invalid("port", `0 or a port such that port + ${nodes - 1} <= 65535`, port);
  }
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) {
    invalid("maxBodyBytes", "a positive integer", maxBodyBytes);
  }
  if (!Number.isSafeInteger(seed)) invalid("seed", "an integer", seed);
  return { nodes, persistence, host, port, maxBodyBytes, seed, backend };
}

/** The backend a cluster runs on, why, and the redis-server binary when it is redis. */
interface Choice {
  readonly kind: BackendKind;
  readonly reason: string;
  readonly binary: string;
}

/**
 * `"auto"`: redis-server when one is on PATH (or `redisServer` names one) and ioredis imports,
 * else memory; AOF persistence and an explicit `redisServer` always mean redis-server. ioredis is
 * not even imported when no redis-server was found.
 */
async function choose(
  backend: "auto" | BackendKind,
  persistence: "none" | "aof",
  redisServer: string | undefined,
): Promise<Choice> {
  if (backend === "memory") return { kind: "memory", reason: "asked for", binary: "" };
  const explicit = backend === "redis" || persistence === "aof" || redisServer !== undefined;
  let binary: string;
  try {
    binary = findRedisServer(redisServer);
  } catch (error) {
    if (explicit || !(error instanceof RedisServerNotFoundError)) throw error;
    return { kind: "memory", reason: "no redis-server found on PATH", binary: "" };
  }
  if (!explicit && !(await ioredisAvailable())) {
    return { kind: "memory", reason: "ioredis is not installed", binary: "" };
  }
  return { kind: "redis", reason: explicit ? "asked for" : "found on PATH", binary };
}

/** Loopback address to reach a server bound to `host` (wildcards are not connectable everywhere). */
function connectHostFor(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "::1";
  return host;
}

/**
 * Starts a local cluster of `nodes` nodes, each behind an Upstash-compatible REST endpoint on
 * loopback, with fault injection per node. Node-only. A node is a `redis-server` (≥ 7.0) child
 * process, or an in-memory node in this process (`backend: "memory"`: edgelock's Lua scripts on a
 * Redis 7 keyspace, kept equal to redis-server by the parity suite; no durability, a restart comes
 * back empty, no memory limit or eviction, and only the commands edgelock and its samples use).
 *
 * Defaults: backend `"auto"` (redis-server when one is on PATH and ioredis is installed, else
 * memory; `cluster.backend` says which), 3 nodes, no persistence (`--save "" --appendonly no`,
 * nothing on disk), host `127.0.0.1`, ephemeral ports, 10 MiB body cap, latency seed 1. Everything
 * is killed by `stop()`, on process exit, on SIGINT/SIGTERM/SIGHUP, and by a watchdog if this
 * process is SIGKILLed.
 *
 * @throws {RedisServerNotFoundError} backend `"redis"` (or AOF persistence) and no redis-server
 *   binary (the message says how to install it)
 * @throws {DevClusterError} an invalid option (named), or a node that could not start
 * @example
 * ```ts
 * import { Redis } from "@upstash/redis";
 * import { startDevCluster } from "edgelock/dev";
 *
 * const cluster = await startDevCluster({ nodes: 3 });
 * const redis = new Redis(cluster.nodes[0]);
 * await redis.set("k", "v");
 * cluster.controls[1].inject({ kind: "latency", ms: 200, count: 1 });
 * await cluster.stop();
 * ```
 */
export async function startDevCluster(options: DevClusterOptions = {}): Promise<DevCluster> {
  const settings = validate(options);
  const choice = await choose(settings.backend, settings.persistence, options.redisServer);
  const { binary } = choice;
  // Loaded here, not at import: ioredis is optional, and the memory engine's Lua VM is needed by
  // memory clusters only.
  const startEngine = await loadEngine(choice.kind);
  // Processes and files only for redis-server: an in-memory node has neither.
  const redis = choice.kind === "redis";
  const root = redis ? mkdtempSync(join(tmpdir(), "edgelock-dev-")) : "";
  const watchdog = redis ? new Watchdog(root) : undefined;
  const nodes: LocalNode[] = [];
  const unregister = registerEmergencyStop(() => {
    for (const node of nodes) node.killNow();
    if (redis) rmSync(root, { recursive: true, force: true });
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await Promise.allSettled(nodes.map((node) => node.stop()));
      watchdog?.close();
      unregister();
      if (redis) rmSync(root, { recursive: true, force: true });
    })();
    return stopping;
  };

  const started = await Promise.allSettled(
    Array.from({ length: settings.nodes }, (_, index) =>
      LocalNode.start(
        {
          index,
          host: settings.host,
          connectHost: connectHostFor(settings.host),
          restPort: settings.port === 0 ? 0 : settings.port + index,
          binary,
          persistence: settings.persistence,
          dir: join(root, `node-${index}`),
          maxBodyBytes: settings.maxBodyBytes,
          seed: settings.seed + index,
          watchdog,
        },
        startEngine,
      ).then((node) => {
        nodes.push(node);
        return node;
      }),
    ),
  );
  const failure = started.find((result) => result.status === "rejected");
  if (failure !== undefined) {
    await stop();
    throw failure.reason;
  }
  nodes.sort((a, b) => a.index - b.index);
  const controls = Object.freeze([...nodes]);
  return Object.freeze({
    backend: choice.kind,
    backendReason: choice.reason,
    nodes: Object.freeze(
      controls.map((node) => Object.freeze({ url: node.url, token: node.token })),
    ),
    controls,
    stop,
  });
}
