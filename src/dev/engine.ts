/**
 * What runs behind one dev node's endpoint, and the process controls it answers to: a
 * redis-server child process (`redis-engine.ts`) or the in-process memory node
 * (`memory-engine.ts`). `LocalNode` (`node.ts`) keeps the state machine and the checks common to
 * both; an engine only does what its kind of store needs.
 *
 * @module
 */

import type { Backend } from "./backend";
import type { Watchdog } from "./cleanup";

/** Which store runs the nodes of a dev cluster. */
export type BackendKind = "redis" | "memory";

/** Everything an engine needs to start. */
export interface EngineSpec {
  /** Interface to bind (redis-server). */
  readonly host: string;
  /** Address to connect to (loopback when binding a wildcard). */
  readonly connectHost: string;
  /** redis-server binary (resolved); unused by the memory engine. */
  readonly binary: string;
  readonly persistence: "none" | "aof";
  /** Private directory of this node (AOF files); unused by the memory engine. */
  readonly dir: string;
  readonly watchdog: Watchdog | undefined;
  /** Called when the store died on its own (an outside kill of redis-server). */
  readonly died: () => void;
}

/** A running store and its controls. */
export interface Engine {
  readonly kind: BackendKind;
  /** The store in messages: "redis-server", "the in-memory node". */
  readonly name: string;
  readonly backend: Backend;
  /** `redis://host:port` of redis-server; `memory://node-<i>` (not connectable) in memory. */
  readonly redisUrl: string;
  /** Requests stall until {@link Engine.resume}. */
  pause(): void;
  resume(): void;
  /** The store is gone: requests fail until {@link Engine.revive}. */
  kill(): Promise<void>;
  /** Starts the store again after a kill; with `keepData` (AOF only) it keeps its data. */
  revive(keepData: boolean): Promise<void>;
  /** Closes connections and ends the store for good. */
  stop(): Promise<void>;
  /** Synchronous last resort while the process exits. */
  killNow(): void;
}

/** Starts the engine of node `index`. */
export type StartEngine = (spec: EngineSpec, index: number) => Promise<Engine>;
