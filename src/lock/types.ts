import type { Budget } from "../budget";
import type { NodeOutcome } from "../errors";
import type { NodeInput } from "../node";
import type { LockKey } from "./keyset";

declare global {
  /**
   * `Symbol.asyncDispose` (ES2026 explicit resource management), declared as `@types/node` and
   * TypeScript's `esnext.disposable` lib declare it, so {@link Lock} type-checks with neither
   * (e.g. `lib: ["ES2023"]` with `@cloudflare/workers-types`).
   */
  interface SymbolConstructor {
    readonly asyncDispose: unique symbol;
  }
}

export type { NodeOutcome, NodeStatus } from "../errors";
export type { NodeCredentials, NodeInput, RedisLike } from "../node";

/**
 * Options of {@link createLocks}. Validated at construction (`ConfigurationError` names the option).
 *
 * @example
 * createLocks({ nodes: [Redis.fromEnv(), { url, token }, { url: url2, token: token2 }], lease: 10_000 })
 */
export interface LocksOptions {
  /**
   * The independent Redis databases (a Redlock quorum of ⌊N/2⌋+1 when N > 1). The same URL twice
   * is a configuration error. One node gives a plain single-instance lock.
   */
  readonly nodes: readonly NodeInput[];
  /** Key namespace; lock `k` lives at `${prefix}k`, its fence counter at `${prefix}k:fence`.
   * @default "lock:" */
  readonly prefix?: string | undefined;
  /** Default lease in ms: TTL of one grant = the longest a crashed holder can block others.
   * @default 10000 */
  readonly lease?: number | undefined;
  /** Issue a strictly increasing fence token per key (`lock.fence`).
   * @default false */
  readonly fencing?: boolean | undefined;
  /** Clock drift allowance as a fraction of the TTL, in [0, 0.5).
   * @default 0.01 */
  readonly driftFactor?: number | undefined;
  /** A grant whose remaining validity is below this many ms is refused (and retried).
   * @default 10 */
  readonly minValidity?: number | undefined;
  /** Per-node request timeout in ms.
   * @default max(250, round(lease × 0.05)) capped at ⌊lease / 3⌋, computed per round from
   *   the grant's TTL (the lease, or less when a budget shortens it) */
  readonly requestTimeout?: number | undefined;
  /**
   * Default `wait` of `acquire` and `using` in ms (0 = one attempt). Unset, `acquire` makes one
   * attempt and `using` waits up to 5000 ms (`DEFAULTS.usingWait`), as redlock and redsync retry;
   * set, both use it.
   * @default 0 (5000 for `using`) */
  readonly wait?: number | undefined;
  /** Base of the exponential retry backoff in ms.
   * @default 50 */
  readonly retryDelay?: number | undefined;
  /** Upper bound of one retry sleep in ms.
   * @default 1000 */
  readonly retryDelayMax?: number | undefined;
  /**
   * No effect; kept so that code written for edgelock 0.1 still runs. Every caller that waits for
   * one key now waits in the nodes' queues and is handed the key by the release before it (one
   * SSE stream per node, waiting key and instance), whatever this option says; callers for
   * several keys, and nodes whose client cannot `subscribe`, poll.
   * @default false
   * @deprecated The queue is always on. */
  readonly wake?: boolean | undefined;
  /** Observability hook; receives events with per-node outcomes and never a token. Exceptions
   * it throws are ignored. */
  readonly onEvent?: ((event: LockEvent) => void) | undefined;
}

/**
 * Options of one `acquire` / `tryAcquire` / `using` call (validated per call).
 *
 * @example
 * await locks.acquire("invoice:42", { lease: 5_000, wait: 2_000, signal: req.signal, budget: b });
 */
export interface AcquireOptions {
  /** Lease in ms for this lock (default: the `createLocks` lease). */
  readonly lease?: number | undefined;
  /** How long to keep retrying while the lock is busy, in ms (default: the `createLocks` wait;
   * for `using` without one, 5000). */
  readonly wait?: number | undefined;
  /** Cancels the wait; the call rejects with `signal.reason`. */
  readonly signal?: AbortSignal | undefined;
  /** Execution budget: sizes the TTL, bounds waiting and counts node requests. */
  readonly budget?: Budget | undefined;
  /** Extend automatically before the validity runs low, until `release()` or loss.
   * @default false (true for `using`) */
  readonly autoExtend?: boolean | undefined;
}

/**
 * A held lock. Immutable identity (`key`, `token`, `fence`); `validUntil` moves on extension.
 *
 * @example
 * const lock = await locks.acquire("k");
 * try { await work({ signal: lock.signal, fence: lock.fence }); } finally { await lock.release(); }
 */
export interface Lock {
  /**
   * The key as given (without prefix); for a lock on several keys, its keys (sorted) joined by
   * `", "`, as errors and events name it.
   */
  readonly key: string;
  /** The lock's keys, sorted and without duplicates (`[key]` for a lock on one key). */
  readonly keys: readonly string[];
  /** Random 128-bit owner token (hex). Usable for check-and-set in your storage. */
  readonly token: string;
  /** Fence token when `fencing` is on: strictly increasing per key across holders. */
  readonly fence: number | undefined;
  /** Epoch ms until which the lock is valid (TTL minus elapsed time and drift). */
  readonly validUntil: number;
  /**
   * Aborts when this handle stops protecting the work, with a reason that says why:
   * - `LockLostError`: the lock was lost, or its validity or the budget's deadline is about to run
   *   out (shortly before either);
   * - `LockEndedError` (`how`): the holder ended it — `"released"` by `release()` (also when
   *   `using()`, `withLock` or the Hono middleware release it), `"handed-on"` by `ticket()`,
   *   `"completed"` when a `once()` or Idempotency-Key run wrote its done marker.
   * The abort comes after the handle left the held state, so an abort listener cannot change the
   * release (a `release()` there returns the same one). Aborts once: a loss before the end keeps
   * the `LockLostError`.
   */
  readonly signal: AbortSignal;
  /**
   * Extend the lock (compare-and-PEXPIRE on all nodes, needs a majority). TTL:
   * `min(lease ?? lock lease, remaining budget + margin)`.
   * @throws {LockLostError} the lock is no longer ours on a majority (or its validity ended)
   * @throws {QuorumError} too many nodes failed to answer
   * @throws {BudgetExhaustedError} the budget cannot cover an extension (nodes not called)
   * @throws {ConfigurationError} `lease` is not a positive integer of ms, or too short for
   *   `minValidity` as `acquire()` would refuse it (nodes not called; the lock stays held)
   */
  extend(lease?: number): Promise<ExtendResult>;
  /**
   * Release on all nodes (compare-and-DEL). Stops auto-extension and awaits an in-flight one
   * first. Never rejects for node failures; an already-expired lock is reported as
   * `status: "expired"`. Idempotent: every call, with or without `settled`, shares one release.
   * After `ticket()` it sends nothing and reports `"handed-on"`.
   *
   * By default it resolves once the result is decided (a majority answered, or too many failed);
   * the other nodes' requests are still in flight. With `{ settled: true }` it resolves with the
   * same result once every node answered or its request timed out: use it where the runtime may
   * freeze or end the invocation when the handler returns (see {@link ReleaseOptions}).
   * @throws {ConfigurationError} `options` is not an object, names an unknown option, or
   *   `settled` is not a boolean (the promise rejects before anything is sent; the lock is held)
   * @example
   * try { return await work(lock); } finally { await lock.release({ settled: true }); }
   */
  release(options?: ReleaseOptions): Promise<ReleaseResult>;
  /**
   * Hand the lock on to another invocation (a queue message, a Step Functions state): extends it
   * to `lease` (default: the lock's lease; not capped by the budget — the lock is meant to outlive
   * this invocation) and returns a {@link LockTicket} for `locks.resume(ticket)` there. From then
   * on this handle no longer holds the lock: it stops auto-extending, `release()` sends nothing
   * (so `using` and `withLock` end normally), `extend()` throws `LockLostError`, and `signal`
   * aborts (`LockEndedError`, `how: "handed-on"`) — stop the protected work before handing on.
   * Resume within `lease`. The ticket carries the token, a capability: keep it inside your
   * pipeline. Idempotent (the same ticket again).
   * @throws {LockLostError} the lock was lost or released
   * @throws {QuorumError} the extension failed on too many nodes (the lock stays yours)
   * @throws {ConfigurationError} `options` is not a plain object, holds an unknown option, or
   *   `lease` is not a positive integer (the promise rejects before anything is sent; the lock is
   *   held)
   */
  ticket(options?: { readonly lease?: number | undefined }): Promise<LockTicket>;
  /**
   * `await using lock = await locks.acquire(key)`: at the end of the scope the lock is released
   * as by `release()` (resolves once a majority answered). Never throws, so an error of the
   * scope is never masked; a lock already released, handed on or completed sends nothing.
   * Where the environment freezes when the handler returns (Lambda), release it yourself with
   * `release({ settled: true })` (as the Lambda adapter's `withLock` does), which waits for every
   * node.
   */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A lock on its way to another invocation (see `lock.ticket()` / `locks.resume()`): plain JSON.
 * Holds the owner token (whoever has it can take the lock over once), never a node's credentials.
 *
 * @example
 * await queue.send(JSON.stringify({ invoice: 42, ticket: await lock.ticket() }));
 */
export interface LockTicket {
  /** Format version. */
  readonly v: 1;
  /**
   * The key as given (without prefix), or the keys (sorted) of a lock on several keys, and the
   * prefix it was locked under.
   */
  readonly key: string | readonly string[];
  readonly prefix: string;
  /** Owner token at hand-off; `resume` replaces it with a fresh one (single use). */
  readonly token: string;
  /** Fence of the sender's grant (`null` without fencing); the resumed lock gets a higher one. */
  readonly fence: number | null;
  /** Lease in ms the resumed lock extends to (and auto-extends by). */
  readonly lease: number;
  /** The nodes' hosts in order (`host:port`, `node<i>` for a client that hides its URL; never
   * a token): `resume` needs the same nodes. */
  readonly nodes: readonly string[];
  /** The sender's estimate of the validity end, epoch ms: informational, never trusted. */
  readonly validUntil: number;
}

/**
 * Options of `locks.resume(ticket, options)`.
 *
 * @example
 * const lock = await locks.resume(message.ticket, { autoExtend: true, budget: budget.fromLambda(ctx) });
 */
export interface ResumeOptions {
  /** Execution budget: sizes the TTL (at most the ticket's lease) and counts node requests. */
  readonly budget?: Budget | undefined;
  /** Extend automatically before the validity runs low, until `release()` or loss.
   * @default false */
  readonly autoExtend?: boolean | undefined;
}

/**
 * Result of `lock.extend()`.
 *
 * @example
 * const { validUntil } = await lock.extend(30_000);
 */
export interface ExtendResult {
  /** New validity end, epoch ms. */
  readonly validUntil: number;
  readonly outcomes: readonly NodeOutcome[];
}

/**
 * Options of `lock.release(options)`. Validated at the call: a `ConfigurationError` names the
 * option.
 *
 * @example
 * // Lambda, a Worker's waitUntil, a scheduled job: let the release settle before returning.
 * await lock.release({ settled: true });
 */
export interface ReleaseOptions {
  /**
   * Resolve only once every node answered the release or its request timed out (each request is
   * bounded by `requestTimeout`), instead of as soon as a majority decided the result. It sends
   * nothing more than the default release and reports the same result; it only waits longer.
   * For runtimes that freeze or end the invocation when the handler returns (AWS Lambda, a
   * Worker's `waitUntil`, Vercel, Netlify, Deno Deploy): a request still in flight then may
   * never run, and leaves the lock on its node until the TTL runs out. Where the release handed
   * the key to this instance's next waiter, that waiter's grant is decided too. After `ticket()`
   * it resolves at once (nothing was sent); after a `once()` or Idempotency-Key completion, once
   * every node answered the COMPLETE requests. Default `false`.
   */
  readonly settled?: boolean | undefined;
}

/**
 * Result of `lock.release()`, e.g. `{ status: "expired", outcomes: [...] }`.
 * - `"released"`: a majority confirmed our token is gone and at least one node deleted it now.
 * - `"expired"`: a majority confirmed our token was already gone (expired, or taken over).
 * - `"unknown"`: too many nodes failed to answer; the remainder expires by its TTL.
 * - `"handed-on"`: the lock went to another invocation as a ticket (`lock.ticket()`); nothing sent.
 */
export interface ReleaseResult {
  readonly status: "released" | "expired" | "unknown" | "handed-on";
  readonly outcomes: readonly NodeOutcome[];
}

/**
 * Result of `locks.inspect(key)`; for operators and the CLI.
 *
 * @example
 * const { held, retryAfter, nodes } = await locks.inspect("invoice:42");
 */
export interface InspectResult {
  readonly key: string;
  /** A majority of nodes report a holder. */
  readonly held: boolean;
  /** A majority of nodes keep a done marker: a `once()` job of this key finished. */
  readonly done: boolean;
  /** When held: ms until a majority of nodes could be free (as `LockBusyError.retryAfter`). */
  readonly retryAfter: number | undefined;
  /** Highest fence counter reported (fencing keys only; 0 when none). */
  readonly fence: number;
  /**
   * Per node: `"held"` (with `pttl`, −1 = no expiry), `"done"` (a `once()` done marker, with
   * `pttl`), `"absent"`, or a failure.
   */
  readonly nodes: readonly NodeOutcome[];
}

/**
 * Result of `locks.forceRelease(key)`.
 *
 * @example
 * (await locks.forceRelease("stuck")).deleted // 3
 */
export interface ForceReleaseResult {
  /** Nodes on which a key was deleted. */
  readonly deleted: number;
  readonly outcomes: readonly NodeOutcome[];
}

/**
 * Events for the `onEvent` hook. Never contain a token.
 * `acquire`: one per round; `extend`/`release`: one per call; `complete`: a `once()` job's lock
 * became its done marker (`unrecorded`: fewer than a majority of nodes hold it); `lost`: the
 * lock's signal aborted.
 *
 * @example
 * createLocks({ nodes, onEvent: (e) => metrics.count(`lock.${e.type}`, e.type === "lost" ? e.reason : e.result) });
 */
export type LockEvent =
  | {
      readonly type: "acquire";
      readonly key: string;
      readonly attempt: number;
      readonly result: "granted" | "busy" | "unavailable" | "invalid";
      readonly durationMs: number;
      readonly outcomes: readonly NodeOutcome[];
    }
  | {
      readonly type: "extend";
      readonly key: string;
      readonly result: "extended" | "lost" | "unavailable";
      readonly durationMs: number;
      readonly outcomes: readonly NodeOutcome[];
    }
  | {
      readonly type: "release";
      readonly key: string;
      readonly result: ReleaseResult["status"];
      readonly durationMs: number;
      readonly outcomes: readonly NodeOutcome[];
    }
  | {
      /** `locks.resume(ticket)`: `lost` when the ticket's lock was gone or resumed already. */
      readonly type: "resume";
      readonly key: string;
      readonly result: "resumed" | "lost" | "unavailable";
      readonly durationMs: number;
      readonly outcomes: readonly NodeOutcome[];
    }
  | {
      readonly type: "complete";
      readonly key: string;
      readonly result: "recorded" | "unrecorded";
      readonly durationMs: number;
      readonly outcomes: readonly NodeOutcome[];
    }
  | {
      readonly type: "lost";
      readonly key: string;
      readonly reason: "lost" | "validity" | "deadline";
      readonly outcomes: readonly NodeOutcome[];
    }
  | {
      /**
       * Node `index` rejected the token (HTTP 401/403): sent once, again only after the node
       * answered normally in between. With a minority misconfigured, locks still work but the
       * quorum tolerates fewer failures; with a majority, every acquire fails at once.
       */
      readonly type: "rejected";
      readonly index: number;
      readonly host: string;
      /** What the node said, e.g. `node 2 (h): rejected the token (HTTP 401 Unauthorized): …`. */
      readonly message: string;
    };

/**
 * The lock manager returned by {@link createLocks}.
 *
 * @example
 * const lock = await locks.tryAcquire("report"); if (lock === null) return; // someone else runs it
 */
export interface Locks {
  /**
   * Acquire `key`, waiting up to `wait` ms while it is busy. Callers of this `Locks` waiting for
   * the same key are served in the order of their calls.
   *
   * An array locks several keys at once (at most 16; sorted and deduplicated, so `["b", "a"]` and
   * `["a", "b"]` are the same lock): every key or none, in one atomic script call per node, with
   * one token, one fence and one validity. It conflicts with every lock that shares a key, in any
   * order, and cannot deadlock with them (no node ever holds part of a set). Waiting for several
   * keys polls (only a wait for one key waits in the nodes' queues).
   * @throws {LockBusyError} still held by someone else after waiting (`retryAfter`; no
   *   `outcomes` when the caller only waited behind a grant of this same `Locks`)
   * @throws {QuorumError} too many nodes failed
   * @throws {BudgetExhaustedError} the budget cannot cover an attempt (nodes not called)
   * @throws {ConfigurationError} invalid key or option
   */
  acquire(key: LockKey, options?: AcquireOptions): Promise<Lock>;
  /**
   * One attempt; `null` when busy. Other failures throw as in `acquire`; a `wait` other than 0 is
   * a `ConfigurationError` (it never waits: use `acquire` with `wait`).
   */
  tryAcquire(key: LockKey, options?: Omit<AcquireOptions, "wait">): Promise<Lock | null>;
  /**
   * Acquire with auto-extension, run `fn(lock)`, release in `finally`. `fn`'s own error is never
   * masked by a release problem (release never throws). Waits for a busy key up to the call's
   * `wait`, else the `createLocks` wait if one was set, else 5000 ms.
   */
  using<T>(key: LockKey, fn: (lock: Lock) => Promise<T> | T, options?: AcquireOptions): Promise<T>;
  /**
   * Take over a lock another invocation handed on with `lock.ticket()`. The first act is an
   * owner-checked round on every node that swaps the ticket's token for a fresh one (needs a
   * majority), so a ticket works once — a message delivered twice resumes once — and the
   * validity counts from that round, never from the sender's clock. With fencing the resumed lock
   * gets a fresh, higher fence (it is a new grant): a fenced store rejects the sender's late writes.
   * @throws {ConfigurationError} not a ticket, or one made for other nodes or another prefix
   * @throws {LockLostError} the ticket's lock expired, was released, or was resumed already
   * @throws {QuorumError} too many nodes failed to answer
   * @throws {BudgetExhaustedError} the budget cannot cover the round (nodes not called)
   */
  resume(ticket: LockTicket, options?: ResumeOptions): Promise<Lock>;
  /** Per-node holder presence, PTTL and fence counter of `key` (waits for every node). */
  inspect(key: string): Promise<InspectResult>;
  /** Delete `key` on every node regardless of holder (operators only; the holder is not told). */
  forceRelease(key: string): Promise<ForceReleaseResult>;
}
