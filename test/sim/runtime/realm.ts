/**
 * Simulated client processes: the library's real code (src/index.ts and the idempotency core, see
 * entry.ts; bundled once with esbuild, `bundle.ts`, or a variant of it with a client-side mutant)
 * evaluated in a `vm` context per client, whose timers, `performance.now()`, `Date.now()` and
 * `crypto.getRandomValues` are the client's own: its clock runs at `rate` × virtual time from an
 * epoch `offset`, its timers fire on the scheduler, its random bytes come from its seed. Each
 * `Locks` instance thus sees the skewed, drifting clock of a process of its own.
 *
 * Contexts are pooled (per bundle): a new client reuses a context's copy of the library with the context's
 * bindings pointed at the new client. That is sound because the library keeps no mutable state at
 * module level (every `createLocks` starts afresh; checked by the replay test, which runs a
 * schedule twice on reused contexts and compares the traces). Errors thrown in a realm are that
 * realm's classes: compare `name`, never `instanceof`.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { createContext, Script } from "node:vm";
import { bundleFor, patchKey, type SourcePatch } from "./bundle";
import type * as Edgelock from "./entry";
import type { Random } from "./random";
import type { Scheduled, Scheduler } from "./scheduler";

/** The library as a client sees it. */
export type Lib = typeof Edgelock;

/** One simulated client process. */
export interface SimClient {
  readonly lib: Lib;
  /** The client's `performance.now()`. */
  now(): number;
  /** The client's `Date.now()`. */
  epoch(): number;
  /** Global virtual time of the client's `Date.now()` reading `epochMs`. */
  toGlobal(epochMs: number): number;
  /** Stop all its timers (the process died); pending work never resumes. */
  kill(): void;
}

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** Clock rate relative to virtual time (within the drift factor). */
  readonly rate: number;
  /** Offset of its `Date.now()` from virtual epoch time, ms. */
  readonly offsetMs: number;
  /** Its random bytes (tokens, jitter). */
  readonly random: Random;
  /** The library's source changed so (client-side mutants; prepared by `prepareBundle`). */
  readonly patches?: readonly SourcePatch[] | undefined;
}

interface Binding {
  scheduler: Scheduler;
  options: ClientOptions;
  started: number;
  timers: Set<Scheduled>;
  dead: boolean;
}

type Factory = (
  module: { exports: unknown },
  exports: unknown,
  require: (id: string) => unknown,
) => void;

interface Slot {
  readonly binding: { current: Binding | undefined };
  readonly lib: Lib;
  /** Its bundle's patches (`patchKey`). */
  readonly key: string;
  busy: boolean;
}

const pool: Slot[] = [];

/** `@upstash/redis` inside the realm: the simulation passes `RedisLike` nodes, never credentials. */
const stubRequire = (id: string): unknown => {
  if (id.startsWith("@upstash/redis")) {
    return {
      Redis: class {
        constructor() {
          throw new Error("the simulation has no REST nodes");
        }
      },
    };
  }
  throw new Error(`the simulation bundle cannot require ${id}`);
};

function newSlot(patches: readonly SourcePatch[]): Slot {
  const binding: { current: Binding | undefined } = { current: undefined };
  const current = (): Binding => {
    if (binding.current === undefined) throw new Error("a pooled realm ran without a client");
    return binding.current;
  };
  const elapsed = (b: Binding) => (b.scheduler.now - b.started) * b.options.rate;
  const setTimer = (fn: (...args: unknown[]) => void, ms: unknown, args: unknown[]) => {
    const b = current();
    // As in Node: a delay below 1 ms (or not a number) is 1 ms.
    const delay = Math.max(1, Number(ms) || 0) / b.options.rate;
    let handle: Scheduled | undefined;
    const timer = {
      unref: () => timer,
      ref: () => timer,
      hasRef: () => true,
      cancel: () => {
        handle?.cancel();
        if (handle !== undefined) b.timers.delete(handle);
      },
    };
    if (b.dead) return timer;
    handle = b.scheduler.after(delay, () => {
      b.timers.delete(handle as Scheduled);
      if (!b.dead) fn(...args);
    });
    b.timers.add(handle);
    return timer;
  };
  const sandbox = {
    setTimeout: (fn: (...args: unknown[]) => void, ms?: unknown, ...args: unknown[]) =>
      setTimer(fn, ms, args),
    clearTimeout: (timer: { cancel?: () => void } | undefined) => timer?.cancel?.(),
    queueMicrotask,
    performance: { now: () => elapsed(current()) },
    crypto: {
      getRandomValues<T extends ArrayBufferView>(array: T): T {
        const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
        const random = current().options.random;
        for (let i = 0; i < bytes.length; i++) bytes[i] = random.uint32() & 0xff;
        return array;
      },
      // SHA-256 only (the idempotency layer's digests), computed at once: Node's own subtle
      // digest settles on its thread pool, outside virtual time, and would make runs differ.
      subtle: {
        digest: async (algorithm: string, data: ArrayBufferView | ArrayBuffer) => {
          if (algorithm !== "SHA-256") throw new Error(`the simulation digests SHA-256 only`);
          const view = ArrayBuffer.isView(data)
            ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
            : new Uint8Array(data);
          const hash = createHash("sha256").update(view).digest();
          return hash.buffer.slice(hash.byteOffset, hash.byteOffset + hash.byteLength);
        },
      },
    },
    btoa,
    atob,
    __epoch: () => {
      const b = current();
      return Math.floor(b.started + b.options.offsetMs + elapsed(b));
    },
    AbortController,
    AbortSignal,
    Event,
    EventTarget,
    DOMException,
    TextEncoder,
    TextDecoder,
    URL,
    console,
    structuredClone,
  };
  const context = createContext(sandbox);
  new Script("Date.now = () => __epoch();").runInContext(context);
  const factory = bundleFor(patches).runInContext(context) as Factory;
  const module = { exports: {} as unknown };
  factory(module, module.exports, stubRequire);
  return { binding, lib: module.exports as Lib, key: patchKey(patches), busy: false };
}

/**
 * A client process with its own clock and randomness, running a fresh copy of the library.
 *
 * @example
 * const client = createClient(scheduler, { rate: 1.004, offsetMs: 3, random: rng.split("c0") });
 * const locks = client.lib.createLocks({ nodes });
 */
export function createClient(scheduler: Scheduler, options: ClientOptions): SimClient {
  const patches = options.patches ?? [];
  const key = patchKey(patches);
  let slot = pool.find((s) => !s.busy && s.key === key);
  if (slot === undefined) {
    slot = newSlot(patches);
    pool.push(slot);
  }
  slot.busy = true;
  const binding: Binding = {
    scheduler,
    options,
    started: scheduler.now,
    timers: new Set(),
    dead: false,
  };
  slot.binding.current = binding;
  return {
    lib: slot.lib,
    now: () => (scheduler.now - binding.started) * options.rate,
    epoch: () =>
      Math.floor(
        binding.started + options.offsetMs + (scheduler.now - binding.started) * options.rate,
      ),
    toGlobal: (epochMs) =>
      binding.started + (epochMs - binding.started - options.offsetMs) / options.rate,
    kill: () => {
      binding.dead = true;
      for (const timer of binding.timers) timer.cancel();
      binding.timers.clear();
    },
  };
}

/** Return every pooled realm (call between schedules, after the run stopped). */
export function releaseClients(): void {
  for (const slot of pool) {
    slot.busy = false;
    slot.binding.current = undefined;
  }
}
