// node-redlock 5.0.0-beta.2 ships its types at dist/index.d.ts but its package.json "exports" map
// has no "types" condition, so TypeScript's Bundler resolution cannot find them (node-redlock
// #290). This declares the slice of its API the lock bench uses.
declare module "redlock" {
  import type { EventEmitter } from "node:events";
  import type { Redis } from "ioredis";

  /** Retry and drift settings (defaults: 0.01, 10, 200 ms, 100 ms, 500 ms). */
  export interface Settings {
    readonly driftFactor: number;
    readonly retryCount: number;
    readonly retryDelay: number;
    readonly retryJitter: number;
    readonly automaticExtensionThreshold: number;
  }

  /** A held lock (resources, random value, local expiration in epoch ms). */
  export class Lock {
    readonly resources: string[];
    readonly value: string;
    expiration: number;
    release(): Promise<unknown>;
  }

  /** The Redlock client: one quorum over the given ioredis connections. */
  export default class Redlock extends EventEmitter {
    constructor(clients: Iterable<Redis>, settings?: Partial<Settings>);
    acquire(resources: string[], duration: number, settings?: Partial<Settings>): Promise<Lock>;
    release(lock: Lock, settings?: Partial<Settings>): Promise<unknown>;
    quit(): Promise<void>;
  }
}
