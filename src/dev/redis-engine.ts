/**
 * The engine of a dev node run by redis-server (see `engine.ts`): the child process
 * (`redis-process.ts`) and the ioredis connections to it (`redis-backend.ts`). Pause and resume are
 * SIGSTOP and SIGCONT; a kill is a SIGKILL; a restart starts a new redis-server on the same port,
 * from the AOF files when the data is kept.
 *
 * @module
 */

import { mkdirSync, rmSync } from "node:fs";
import type { Engine, EngineSpec, StartEngine } from "./engine";
import { RedisBackend } from "./redis-backend";
import { RedisProcess } from "./redis-process";

/** How long a restart waits for the endpoint's connection to come back. */
const RECONNECT_TIMEOUT_MS = 15_000;

const hostForUrl = (host: string): string => (host.includes(":") ? `[${host}]` : host);

class RedisEngine implements Engine {
  readonly kind = "redis";
  readonly name = "redis-server";
  readonly backend: RedisBackend;
  readonly #spec: EngineSpec;
  #redis: RedisProcess;

  constructor(spec: EngineSpec, redis: RedisProcess) {
    this.#spec = spec;
    this.#redis = redis;
    this.backend = new RedisBackend(spec.connectHost, redis.port);
    this.#track(redis);
  }

  get redisUrl(): string {
    return `redis://${hostForUrl(this.#spec.connectHost)}:${this.#redis.port}`;
  }

  pause(): void {
    this.#redis.signal("SIGSTOP");
  }

  resume(): void {
    this.#redis.signal("SIGCONT");
  }

  kill(): Promise<void> {
    return this.#redis.kill();
  }

  async revive(keepData: boolean): Promise<void> {
    const { dir } = this.#spec;
    if (!keepData) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
    }
    const redis = await RedisProcess.start({
      binary: this.#spec.binary,
      host: this.#spec.host,
      port: this.#redis.port,
      dir,
      persistence: this.#spec.persistence,
    });
    this.#redis = redis;
    this.#track(redis);
    await this.backend.waitReady(RECONNECT_TIMEOUT_MS);
  }

  async stop(): Promise<void> {
    this.backend.close();
    await this.#redis.kill();
  }

  killNow(): void {
    this.#redis.signal("SIGKILL");
  }

  #track(redis: RedisProcess): void {
    this.#spec.watchdog?.watch(redis.pid);
    void redis.exited.then(() => {
      this.#spec.watchdog?.unwatch(redis.pid);
      if (this.#redis === redis) this.#spec.died();
    });
  }
}

/**
 * Starts redis-server on a free port and connects to it.
 *
 * @example
 * const engine = await startRedisEngine(spec, 0);
 */
export const startRedisEngine: StartEngine = async (spec) => {
  mkdirSync(spec.dir, { recursive: true });
  const redis = await RedisProcess.startOnFreePort({
    binary: spec.binary,
    host: spec.host,
    dir: spec.dir,
    persistence: spec.persistence,
  });
  const engine = new RedisEngine(spec, redis);
  try {
    await engine.backend.connect();
  } catch (error) {
    await engine.stop();
    throw error;
  }
  return engine;
};
