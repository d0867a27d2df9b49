/**
 * One dev node: a redis-server process, the ioredis backend in front of it, its REST endpoint, its
 * faults and counters, and the controls of `DevNode` (pause, resume, kill, restart).
 *
 * @module
 */

import { mkdirSync, rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { type AdminControls, createAdminHandler } from "./admin";
import { createToken } from "./auth";
import { Backend } from "./backend";
import type { Watchdog } from "./cleanup";
import { Endpoint } from "./endpoint";
import { DevClusterError } from "./errors";
import { FaultSet } from "./faults";
import { RedisProcess } from "./redis-process";
import { Stats } from "./stats";
import type { Fault, NodeStats, RestartOptions } from "./types";

/** How long `restart()` waits for the endpoint's connection to come back. */
const RECONNECT_TIMEOUT_MS = 15_000;

/** Everything one node needs to start. */
export interface NodeSpec {
  readonly index: number;
  /** Interface to bind. */
  readonly host: string;
  /** Address to connect to (loopback when binding a wildcard). */
  readonly connectHost: string;
  /** REST port; 0 = ephemeral. */
  readonly restPort: number;
  readonly binary: string;
  readonly persistence: "none" | "aof";
  /** Private directory of this node (AOF files). */
  readonly dir: string;
  readonly maxBodyBytes: number;
  readonly seed: number;
  readonly watchdog: Watchdog;
}

type State = "running" | "paused" | "killed" | "stopped";

const hostForUrl = (host: string): string => (host.includes(":") ? `[${host}]` : host);

/** A running node; implements the public `DevNode` controls. */
export class LocalNode implements AdminControls {
  readonly index: number;
  readonly token = createToken();
  readonly #spec: NodeSpec;
  readonly #faults: FaultSet;
  readonly #stats = new Stats();
  #redis: RedisProcess;
  #backend: Backend | undefined;
  #endpoint: Endpoint | undefined;
  #state: State = "running";
  /** Serializes kill/restart so two restarts never race for the port. */
  #lifecycle: Promise<unknown> = Promise.resolve();

  private constructor(spec: NodeSpec, redis: RedisProcess) {
    this.index = spec.index;
    this.#spec = spec;
    this.#faults = new FaultSet(spec.seed);
    this.#redis = redis;
    this.#track(redis);
  }

  /** Starts redis-server, connects to it and opens the REST endpoint. */
  static async start(spec: NodeSpec): Promise<LocalNode> {
    mkdirSync(spec.dir, { recursive: true });
    const redis = await RedisProcess.startOnFreePort({
      binary: spec.binary,
      host: spec.host,
      dir: spec.dir,
      persistence: spec.persistence,
    });
    const node = new LocalNode(spec, redis);
    try {
      node.#backend = new Backend(spec.connectHost, redis.port);
      await node.#backend.connect();
      node.#endpoint = await Endpoint.listen({
        label: () => node.label,
        host: spec.host,
        port: spec.restPort,
        token: node.token,
        maxBodyBytes: spec.maxBodyBytes,
        backend: node.#backend,
        faults: node.#faults,
        stats: node.#stats,
        admin: createAdminHandler(node),
      });
    } catch (error) {
      await node.stop();
      throw error;
    }
    return node;
  }

  get url(): string {
    return `http://${hostForUrl(this.#spec.connectHost)}:${this.#endpoint?.port ?? 0}`;
  }

  get redisUrl(): string {
    return `redis://${hostForUrl(this.#spec.connectHost)}:${this.#redis.port}`;
  }

  /** `node <i> (<host>:<port>)`, for error messages. */
  get label(): string {
    return `node ${this.index} (${this.#spec.connectHost}:${this.#endpoint?.port ?? this.#spec.restPort})`;
  }

  inject(fault: Fault): void {
    this.#faults.add(fault);
  }

  clearFaults(): void {
    this.#faults.clear();
  }

  listFaults(): Fault[] {
    return this.#faults.list();
  }

  pause(): void {
    if (this.#state !== "running") {
      throw new DevClusterError(`${this.label}: cannot pause, redis-server is ${this.#state}`);
    }
    this.#redis.signal("SIGSTOP");
    this.#state = "paused";
  }

  resume(): void {
    if (this.#state !== "paused") return;
    this.#redis.signal("SIGCONT");
    this.#state = "running";
  }

  async kill(): Promise<void> {
    this.#assertNotStopped("kill");
    return this.#serialized(async () => {
      await this.#redis.kill();
      this.#state = "killed";
    });
  }

  async restart(opts: RestartOptions = {}): Promise<void> {
    this.#assertNotStopped("restart");
    const { persistence } = this.#spec;
    const delayMs = opts.delayMs ?? 0;
    const keepData = opts.keepData ?? persistence === "aof";
    if (!(Number.isFinite(delayMs) && delayMs >= 0)) {
      throw new DevClusterError(`${this.label}: restart "delayMs" must be a duration >= 0`);
    }
    if (keepData && persistence !== "aof") {
      throw new DevClusterError(
        `${this.label}: restart({ keepData: true }) needs the cluster option persistence: "aof"`,
      );
    }
    return this.#serialized(async () => {
      await this.#redis.kill();
      this.#state = "killed";
      if (delayMs > 0) await sleep(delayMs);
      if (!keepData) {
        rmSync(this.#spec.dir, { recursive: true, force: true });
        mkdirSync(this.#spec.dir, { recursive: true });
      }
      this.#assertNotStopped("restart");
      const redis = await RedisProcess.start({
        binary: this.#spec.binary,
        host: this.#spec.host,
        port: this.#redis.port,
        dir: this.#spec.dir,
        persistence,
      });
      this.#redis = redis;
      this.#track(redis);
      this.#state = "running";
      await this.#backend?.waitReady(RECONNECT_TIMEOUT_MS);
    });
  }

  stats(): NodeStats {
    return this.#stats.snapshot();
  }

  resetStats(): void {
    this.#stats.reset();
  }

  /** Closes the endpoint and the connections, kills redis-server. */
  async stop(): Promise<void> {
    this.#state = "stopped";
    await this.#endpoint?.close();
    this.#backend?.close();
    await this.#lifecycle.catch(() => {});
    await this.#redis.kill();
  }

  /** Synchronous last resort while the process exits. */
  killNow(): void {
    this.#redis.signal("SIGKILL");
  }

  #track(redis: RedisProcess): void {
    this.#spec.watchdog.watch(redis.pid);
    void redis.exited.then(() => {
      this.#spec.watchdog.unwatch(redis.pid);
      // Died on its own (or by an outside kill): report it like a kill.
      if (this.#redis === redis && this.#state !== "stopped") this.#state = "killed";
    });
  }

  #serialized(action: () => Promise<void>): Promise<void> {
    const run = this.#lifecycle.catch(() => {}).then(action);
    this.#lifecycle = run;
    return run;
  }

  #assertNotStopped(what: string): void {
    if (this.#state === "stopped") {
      throw new DevClusterError(`${this.label}: cannot ${what}, the cluster is stopped`);
    }
  }
}
