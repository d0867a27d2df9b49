/**
 * The public API's options, one row per function or method: how to call it with options (every
 * other argument valid), or why it takes none. `api-options.test.ts` finds the functions itself —
 * every export of every entry point of package.json `exports`, every function of an exported
 * object (`budget.within`), every method of an exported class and of the objects the API hands
 * out (`Locks`, `Lock`, `Budget`, a dev cluster's node…) — and fails for one without a row here,
 * so a new export or method cannot go unchecked.
 *
 * The rule every row follows: only `undefined` means "no options". An unknown name (a symbol key
 * too; in an object without a prototype too), a number, a string, an array, a Map or `null` where
 * options go is refused with a `ConfigurationError`
 * naming the option (or `options`), as `createLocks` and `lock.release()` always did, before
 * anything is sent. `edgelock/dev` (a Node-only dev tool) refuses with its own
 * `DevClusterError`, whose message names the option in quotes.
 *
 * @module
 */

import { idempotency, limit, lock } from "../../../src/adapters/hono/index";
import {
  dedupeScheduled as lambdaScheduled,
  withIdempotency,
  withLimit,
  withLock,
} from "../../../src/adapters/lambda/index";
import { dedupeScheduled as workersScheduled } from "../../../src/adapters/workers/index";
import { type DevCluster, startDevCluster } from "../../../src/dev/index";
import {
  budget,
  createLocks,
  type Lock,
  type Locks,
  type LockTicket,
  once,
  type Permit,
  semaphore,
} from "../../../src/index";
import { MemoryNode, manualClock, memoryNode, memoryNodes } from "../../../src/testing/index";

/** The lock key every row works on (under the row's own prefix). */
export const KEY = "k";

/** What a row's call gets: a manager on the real cluster under a fresh prefix, and more. */
export interface World {
  readonly nodes: readonly { url: string; token: string }[];
  readonly prefix: string;
  readonly locks: Locks;
  /** The lock on {@link KEY}, held by this process (rows with `setup: "lock"`). */
  readonly lock: Lock;
  /** A ticket for the lock on {@link KEY} (rows with `setup: "ticket"`). */
  readonly ticket: LockTicket;
  /** A permit of the semaphore {@link KEY} ({@link PERMITS}), held (rows with `setup: "permit"`). */
  readonly permit: Permit;
  /** The protected work: must never run on a refused call. */
  readonly job: (...args: unknown[]) => Promise<string>;
  /** A one-node in-memory dev cluster, for the dev cluster's own controls. */
  readonly devCluster: DevCluster;
}

/** The permit count of the semaphore every semaphore row works on. */
export const PERMITS = 2;

/** What the API hands out, whose methods must have rows too (`Kind.method`). */
export type InstanceKind =
  | "Locks"
  | "Lock"
  | "Semaphore"
  | "Permit"
  | "Budget"
  | "ManualClock"
  | "DevCluster"
  | "DevNode";

/** An instance of each kind, to enumerate its methods (the test releases and stops them). */
export const INSTANCES: Record<InstanceKind, (w: World) => Promise<object>> = {
  Locks: async (w) => w.locks,
  Lock: async (w) => w.locks.acquire("instance"),
  Semaphore: async (w) => semaphore(w.locks, "instance", { permits: PERMITS }),
  Permit: async (w) => semaphore(w.locks, "instance", { permits: PERMITS }).acquire(),
  Budget: async () => budget.within(1_000),
  ManualClock: async () => manualClock(),
  DevCluster: async (w) => w.devCluster,
  DevNode: async (w) => w.devCluster.controls[0] as object,
};

/** A function or method that takes options. */
export interface OptionsRow {
  /** Calls it with `options` where its options go. */
  readonly call: (w: World, options: unknown) => unknown;
  /** Valid options the unknown name is added to (default: none). */
  readonly base?: (w: World) => object;
  /**
   * For an argument that is not an options object (`extend(lease)`): its name, which every
   * refusal must carry (the unknown name too: an object is refused as that argument).
   */
  readonly positional?: string;
  /** The name a refused non-object carries (default `options`). */
  readonly argument?: string;
  /** Inputs it accepts on purpose, each with why (they are not fed). */
  readonly accepts?: Partial<Record<Feed, string>>;
  /** The refusal: `ConfigurationError` (default) or the dev tool's `DevClusterError`. */
  readonly refusal?: "configuration" | "dev";
  /** What must exist before the call; afterwards it is still held, then released. */
  readonly setup?: "lock" | "ticket" | "permit";
  /** The kinds of object it hands out (their methods need rows). */
  readonly returns?: readonly InstanceKind[];
}

/** A function or method that takes no options, and why. */
export interface ReasonRow {
  readonly none: string;
  readonly returns?: readonly InstanceKind[];
}

/** What each row is fed where its options go. */
export type Feed =
  | "unknown"
  | "symbol"
  | "nullPrototype"
  | "number"
  | "string"
  | "array"
  | "map"
  | "null";

const NUMBER_ARGUMENT = "its argument is a number";
const ERROR_CLASS =
  "an error class: its options carry fields of the error it describes (`cause`, `outcomes`), " +
  "as `Error`'s do; they configure nothing, and a constructor that threw would turn one error " +
  "into another";
const GUARD = "a type guard: takes any value and answers true or false; nothing to configure";
const REDIS_ARGS =
  "Redis's own arguments (a script, keys and values, a command), as the client libraries take " +
  "them; an unsupported command is refused (MemoryNodeError, test/testing)";
const NO_ARGUMENTS = "takes no arguments";

const lambdaContext = { getRemainingTimeInMillis: () => 10_000 };
const keyOf = () => KEY;
const sem = (w: World) => semaphore(w.locks, KEY, { permits: PERMITS });

/** Every function and method of the public API, by `specifier#export` or `Kind.method`. */
export const ROWS: Record<string, OptionsRow | ReasonRow> = {
  // edgelock
  "edgelock#createLocks": {
    call: (_, o) => createLocks(o as never),
    base: (w) => ({ nodes: w.nodes }),
    returns: ["Locks"],
  },
  "edgelock#once": { call: (w, o) => once(w.locks, KEY, w.job, o as never) },
  "edgelock#semaphore": {
    call: (w, o) => semaphore(w.locks, KEY, o as never),
    base: () => ({ permits: PERMITS }),
    returns: ["Semaphore"],
  },
  "edgelock#budget.lambda": {
    call: (_, o) => budget.lambda(lambdaContext, o as never),
    returns: ["Budget"],
  },
  "edgelock#budget.workersFetch": {
    call: (_, o) => budget.workersFetch(o as never),
    returns: ["Budget"],
  },
  "edgelock#budget.workersScheduled": {
    call: (_, o) => budget.workersScheduled(o as never),
    returns: ["Budget"],
  },
  "edgelock#budget.until": {
    call: (_, o) => budget.until(Date.now() + 5_000, o as never),
    returns: ["Budget"],
  },
  "edgelock#budget.within": {
    call: (_, o) => budget.within(5_000, o as never),
    returns: ["Budget"],
  },
  "edgelock#nodesFromEnv": {
    none:
      "takes an env object (a Worker's env, process.env), whose other variables are the app's own; " +
      "a non-object is refused as `env`, a bad variable by name (src/node/env.test.ts)",
  },
  "edgelock#BudgetExhaustedError": { none: ERROR_CLASS },
  "edgelock#ConfigurationError": { none: ERROR_CLASS },
  "edgelock#LockBusyError": { none: ERROR_CLASS },
  "edgelock#LockEndedError": { none: ERROR_CLASS },
  "edgelock#LockError": { none: ERROR_CLASS },
  "edgelock#LockLostError": { none: ERROR_CLASS },
  "edgelock#QuorumError": { none: ERROR_CLASS },
  "edgelock#SemaphoreBusyError": { none: ERROR_CLASS },
  "edgelock#TransportError": { none: ERROR_CLASS },
  "edgelock#isBudgetExhaustedError": { none: GUARD },
  "edgelock#isConfigurationError": { none: GUARD },
  "edgelock#isLockBusyError": { none: GUARD },
  "edgelock#isLockEndedError": { none: GUARD },
  "edgelock#isLockError": { none: GUARD },
  "edgelock#isLockLostError": { none: GUARD },
  "edgelock#isQuorumError": { none: GUARD },
  "edgelock#isSemaphoreBusyError": { none: GUARD },
  "edgelock#isTransportError": { none: GUARD },

  // what createLocks hands out
  "Locks.acquire": { call: (w, o) => w.locks.acquire(KEY, o as never), returns: ["Lock"] },
  "Locks.tryAcquire": { call: (w, o) => w.locks.tryAcquire(KEY, o as never), returns: ["Lock"] },
  "Locks.using": { call: (w, o) => w.locks.using(KEY, w.job, o as never) },
  "Locks.resume": {
    call: (w, o) => w.locks.resume(w.ticket, o as never),
    setup: "ticket",
    returns: ["Lock"],
  },
  "Locks.inspect": { none: "takes a key; a bad one is refused as `key` (bad-inputs.test.ts)" },
  "Locks.forceRelease": { none: "takes a key; a bad one is refused as `key` (bad-inputs.test.ts)" },
  "Lock.release": { call: (w, o) => w.lock.release(o as never), setup: "lock" },
  "Lock.ticket": { call: (w, o) => w.lock.ticket(o as never), setup: "lock" },
  "Lock.extend": {
    call: (w, o) => w.lock.extend(o as never),
    positional: "lease",
    accepts: { number: `${NUMBER_ARGUMENT} (the new lease, ms)` },
    setup: "lock",
  },
  "Lock.[Symbol.asyncDispose]": {
    none: "`await using`'s end: the language calls it with no arguments",
  },

  // what semaphore() hands out
  "Semaphore.acquire": { call: (w, o) => sem(w).acquire(o as never), returns: ["Permit"] },
  "Semaphore.tryAcquire": { call: (w, o) => sem(w).tryAcquire(o as never), returns: ["Permit"] },
  "Semaphore.using": { call: (w, o) => sem(w).using(w.job, o as never) },
  "Semaphore.inspect": { none: NO_ARGUMENTS },
  "Permit.release": { call: (w, o) => w.permit.release(o as never), setup: "permit" },
  "Permit.extend": {
    call: (w, o) => w.permit.extend(o as never),
    positional: "lease",
    accepts: { number: `${NUMBER_ARGUMENT} (the new lease, ms)` },
    setup: "permit",
  },
  "Permit.[Symbol.asyncDispose]": {
    none: "`await using`'s end: the language calls it with no arguments",
  },

  "Budget.remaining": { none: NO_ARGUMENTS },
  "Budget.remainingSubrequests": { none: NO_ARGUMENTS },
  "Budget.charge": {
    call: (_, o) => budget.within(1_000).charge(o as never),
    positional: "requests",
    accepts: { number: `${NUMBER_ARGUMENT} (node requests)` },
  },
  "Budget.ttl": {
    call: (_, o) => budget.within(1_000).ttl(o as never),
    positional: "lease",
    accepts: { number: `${NUMBER_ARGUMENT} (a lease, ms)` },
  },

  // edgelock/hono
  "edgelock/hono#lock": {
    call: (_, o) => lock(o as never),
    base: (w) => ({ locks: w.locks, key: keyOf }),
  },
  "edgelock/hono#limit": {
    call: (_, o) => limit(o as never),
    base: (w) => ({ locks: w.locks, key: keyOf, permits: PERMITS }),
  },
  "edgelock/hono#idempotency": {
    call: (_, o) => idempotency(o as never),
    base: (w) => ({ locks: w.locks }),
  },
  "edgelock/hono#defaultStore": { none: "takes an HTTP status and answers whether to keep it" },
  "edgelock/hono#retryAfterSeconds": { none: "takes ms and answers whole seconds" },

  // edgelock/lambda
  "edgelock/lambda#withLock": {
    call: (w, o) => withLock(w.job, o as never),
    base: (w) => ({ locks: w.locks, key: keyOf }),
  },
  "edgelock/lambda#withLimit": {
    call: (w, o) => withLimit(w.job, o as never),
    base: (w) => ({ locks: w.locks, key: keyOf, permits: PERMITS }),
  },
  "edgelock/lambda#withIdempotency": {
    call: (w, o) => withIdempotency(w.job, o as never),
    base: (w) => ({ locks: w.locks }),
  },
  "edgelock/lambda#dedupeScheduled": {
    call: (w, o) => lambdaScheduled(w.job, o as never),
    base: (w) => ({ locks: w.locks }),
  },
  "edgelock/lambda#scheduledKey": {
    none: "takes an event and a job name and answers the occurrence's key (or undefined)",
  },
  "edgelock/lambda#defaultStore": { none: "takes an HTTP status and answers whether to keep it" },

  // edgelock/workers
  "edgelock/workers#dedupeScheduled": {
    call: (w, o) => workersScheduled(w.job as never, o as never),
    base: (w) => ({ locks: w.locks, name: "job" }),
  },
  "edgelock/workers#nodesFromEnv": {
    none: "the same function as edgelock's nodesFromEnv: takes an env object, not options",
  },

  // edgelock/dev
  "edgelock/dev#startDevCluster": {
    call: (_, o) => startDevCluster(o as never),
    base: () => ({ nodes: 1, backend: "memory" }),
    refusal: "dev",
    returns: ["DevCluster", "DevNode"],
  },
  "edgelock/dev#DevClusterError": { none: ERROR_CLASS },
  "edgelock/dev#RedisServerNotFoundError": { none: ERROR_CLASS },
  "DevCluster.stop": { none: NO_ARGUMENTS },
  "DevNode.inject": {
    call: (w, o) => w.devCluster.controls[0]?.inject(o as never),
    base: () => ({ kind: "hang", command: "zzz-no-such-command", count: 1 }),
    argument: "fault",
    refusal: "dev",
  },
  "DevNode.restart": {
    call: (w, o) => w.devCluster.controls[0]?.restart(o as never),
    refusal: "dev",
  },
  "DevNode.clearFaults": { none: NO_ARGUMENTS },
  "DevNode.pause": { none: NO_ARGUMENTS },
  "DevNode.resume": { none: NO_ARGUMENTS },
  "DevNode.kill": { none: NO_ARGUMENTS },
  "DevNode.stats": { none: NO_ARGUMENTS },
  "DevNode.resetStats": { none: NO_ARGUMENTS },
  // Methods of the node class beyond the DevNode type (the cluster's own stop paths, the admin
  // route's list): reachable at run time, so listed.
  "DevNode.listFaults": { none: NO_ARGUMENTS },
  "DevNode.stop": { none: NO_ARGUMENTS },
  "DevNode.killNow": { none: NO_ARGUMENTS },

  // edgelock/testing
  "edgelock/testing#MemoryNode": { call: (_, o) => new MemoryNode(o as never) },
  "edgelock/testing#memoryNode": { call: (_, o) => memoryNode(o as never) },
  "edgelock/testing#memoryNodes": { call: (_, o) => memoryNodes(1, o as never) },
  "edgelock/testing#manualClock": {
    call: (_, o) => manualClock(o as never),
    positional: "start",
    accepts: { number: `${NUMBER_ARGUMENT} (the start, epoch ms)` },
    returns: ["ManualClock"],
  },
  "edgelock/testing#realClock.now": { none: NO_ARGUMENTS },
  "edgelock/testing#MemoryNodeError": { none: ERROR_CLASS },
  "edgelock/testing#UnsupportedCommandError": { none: ERROR_CLASS },
  "MemoryNode.eval": { none: REDIS_ARGS },
  "MemoryNode.evalsha": { none: REDIS_ARGS },
  "MemoryNode.command": { none: REDIS_ARGS },
  "MemoryNode.subscribe": { none: "takes a channel name" },
  "MemoryNode.pttl": { none: "takes a key" },
  "MemoryNode.get": { none: "takes a key" },
  "MemoryNode.keys": { none: NO_ARGUMENTS },
  "MemoryNode.flushScripts": { none: NO_ARGUMENTS },
  "ManualClock.now": { none: NO_ARGUMENTS },
  "ManualClock.advance": {
    call: (_, o) => manualClock().advance(o as never),
    positional: "ms",
    accepts: { number: `${NUMBER_ARGUMENT} (ms to move on)` },
  },
};
