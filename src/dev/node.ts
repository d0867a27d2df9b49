/**
 * One dev node: its store (an engine: a redis-server process, or the in-memory node), its REST
 * endpoint, its faults and counters, and the controls of `DevNode` (pause, resume, kill, restart).
 *
 * @module
 */

import { setTimeout as sleep } from "node:timers/promises";
import { isPlainObject } from "../errors";
import { type AdminControls, createAdminHandler } from "./admin";
import { createToken } from "./auth";
import type { Watchdog } from "./cleanup";
import { Endpoint } from "./endpoint";
import type { BackendKind, Engine, StartEngine } from "./engine";
import { DevClusterError, kindOf } from "./errors";
import { FaultSet } from "./faults";
import { Stats } from "./stats";
import type { Fault, NodeStats, RestartOptions } from "./types";

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
  readonly watchdog: Watchdog | undefined;
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
  #engine: Engine | undefined;
  #endpoint: Endpoint | undefined;
  #state: State = "running";
  /** Serializes kill/restart so two restarts never race for the port. */
  #lifecycle: Promise<unknown> = Promise.resolve();

  private constructor(spec: NodeSpec) {
    this.index = spec.index;
    this.#spec = spec;
    this.#faults = new FaultSet(spec.seed);
  }

  /** Starts the store with `startEngine`, then opens the REST endpoint in front of it. */
  static async start(spec: NodeSpec, startEngine: StartEngine): Promise<LocalNode> {
    const node = new LocalNode(spec);
    const died = () => {
      // Died on its own (or by an outside kill): report it like a kill.
      if (node.#state !== "stopped") node.#state = "killed";
    };
    const engine = await startEngine({ ...spec, died }, spec.index);
    node.#engine = engine;
    try {
      node.#endpoint = await Endpoint.listen({
        label: () => node.label,
        host: spec.host,
        port: spec.restPort,
        token: node.token,
        maxBodyBytes: spec.maxBodyBytes,
        backend: engine.backend,
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

  /** Which store runs this node. */
  get backend(): BackendKind {
    return this.#engine?.kind ?? "redis";
  }

  get url(): string {
    return `http://${hostForUrl(this.#spec.connectHost)}:${this.#endpoint?.port ?? 0}`;
  }

  get redisUrl(): string {
    return this.#engine?.redisUrl ?? "";
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
      throw new DevClusterError(`${this.label}: cannot pause, ${this.#name} is ${this.#state}`);
    }
    this.#engine?.pause();
    this.#state = "paused";
  }

  resume(): void {
    if (this.#state !== "paused") return;
    this.#engine?.resume();
    this.#state = "running";
  }

  async kill(): Promise<void> {
    this.#assertNotStopped("kill");
    return this.#serialized(async () => {
      await this.#engine?.kill();
      this.#state = "killed";
    });
  }

  async restart(opts: RestartOptions = {}): Promise<void> {
    this.#assertNotStopped("restart");
    // A typo (`keepdata`) or a bare number must not restart the node with the defaults.
    if (!isPlainObject(opts)) {
      throw new DevClusterError(
        `${this.label}: restart "options" must be a plain object (got ${kindOf(opts)})`,
      );
    }
    for (const key of Reflect.ownKeys(opts)) {
      const name = String(key);
      if (typeof key === "symbol" || (name !== "delayMs" && name !== "keepData")) {
        throw new DevClusterError(
          `${this.label}: restart: unknown option "${name}" (known: delayMs, keepData)`,
        );
      }
    }
    const { persistence } = this.#spec;
    const delayMs = opts.delayMs ?? 0;
    const keepData = opts.keepData ?? persistence === "aof";
    if (!(Number.isFinite(delayMs) && delayMs >= 0)) {
      throw new DevClusterError(`${this.label}: restart "delayMs" must be a duration >= 0`);
    }
    if (keepData && persistence !== "aof") {
      throw new DevClusterError(
        this.backend === "memory"
          ? `${this.label}: restart({ keepData: true }) needs redis-server with persistence: "aof"; an in-memory node always restarts empty`
          : `${this.label}: restart({ keepData: true }) needs the cluster option persistence: "aof"`,
      );
    }
    return this.#serialized(async () => {
      await this.#engine?.kill();
      this.#state = "killed";
      if (delayMs > 0) await sleep(delayMs);
      this.#assertNotStopped("restart");
      await this.#engine?.revive(keepData);
      this.#state = "running";
    });
  }

  stats(): NodeStats {
    return this.#stats.snapshot();
  }

  resetStats(): void {
    this.#stats.reset();
  }

  /** Closes the endpoint and the connections, ends the store (kills redis-server). */
  async stop(): Promise<void> {
    this.#state = "stopped";
    await this.#endpoint?.close();
    await this.#lifecycle.catch(() => {});
    await this.#engine?.stop();
  }

  /** Synchronous last resort while the process exits. */
  killNow(): void {
    this.#engine?.killNow();
  }

  get #name(): string {
    return this.#engine?.name ?? "redis-server";
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
