import {
  ConfigurationError,
  checkKnown,
  isLockBusyError,
  type NodeOutcome,
  shown,
} from "../errors";
import {
  type AcquireOptions,
  abortable,
  checkKey,
  coreOf,
  isLocks,
  type LockCore,
  LockHandle,
  type Locks,
  lookOnce,
  resolveCall,
} from "../lock";
import { semaphoreKeys } from "../scripts";
import { acquirePermit } from "./acquire";
import type { PermitGrant } from "./grant";
import { type Permit, PermitHandle } from "./permit";
import { inspectRound, type SlotsPlan } from "./rounds";

/** The most permits one semaphore takes: each request carries every slot's keys. */
export const MAX_PERMITS = 64;

/** Options of {@link semaphore}. */
export interface SemaphoreOptions {
  /** How many holders at once: an integer from 1 to {@link MAX_PERMITS}. Required. */
  readonly permits: number;
}

/** What {@link Semaphore.inspect} read on the nodes. */
export interface SemaphoreInspection {
  readonly key: string;
  readonly permits: number;
  /** Slots held on a majority of nodes now. */
  readonly held: number;
  /**
   * Slots free on a majority of nodes now. With nodes failing, `held + free` may be less than
   * `permits`: the rest cannot be told.
   */
  readonly free: number;
  /**
   * Ms until one permit is free at most if nobody extends: 0 when one is free now, -1 when every
   * slot is held without expiry; `undefined` when too few nodes answered to bound it.
   */
  readonly retryAfter: number | undefined;
  /**
   * Per slot: held on a majority, free on a majority (neither: cannot be told), and until when
   * it is held at most (its majority's PTTL; 0 free, -1 no expiry or cannot be told).
   */
  readonly slots: readonly { slot: number; held: boolean; free: boolean; retryAfter: number }[];
  /** Every node's outcome. */
  readonly nodes: readonly NodeOutcome[];
}

/**
 * A counting semaphore on the manager's nodes (see {@link semaphore}): at most `permits` holders
 * at once, each permit a lock on one of `permits` slots (docs/SAFETY.md §4c).
 */
export interface Semaphore {
  readonly key: string;
  readonly permits: number;
  /**
   * Take one permit, waiting up to `wait` ms (default: the manager's `wait`) while all are held.
   *
   * @throws {SemaphoreBusyError} every permit stayed held (an `isLockBusyError` too)
   * @throws {QuorumError} | {BudgetExhaustedError} | {ConfigurationError} as `locks.acquire`
   */
  acquire(options?: AcquireOptions): Promise<Permit>;
  /**
   * One look, no wait: a permit, or `null` when all are held. A `wait` other than 0 is a
   * `ConfigurationError` (use `acquire` with `wait`).
   */
  tryAcquire(options?: Omit<AcquireOptions, "wait">): Promise<Permit | null>;
  /**
   * Run `fn` holding a permit (auto-extended; waits 5,000 ms by default), release it after.
   * `fn`'s own error is never masked.
   */
  using<T>(fn: (permit: Permit) => Promise<T> | T, options?: AcquireOptions): Promise<T>;
  /** Read every slot on every node (no permit taken). */
  inspect(): Promise<SemaphoreInspection>;
}

const OPTIONS: ReadonlySet<string> = new Set(["permits"]);

/**
 * A semaphore named `key` with `permits` permits on `locks`' nodes: "at most N at once" across
 * every invocation (calls to a rate-limited API, connections, heavy jobs). It sends nothing until
 * used, and holds no state: create it where you use it. Instances configured with different
 * `permits` for one key (during a deploy) share slots: at most the larger count hold at once.
 *
 * @throws {ConfigurationError} `locks` not a manager, `key` not a valid key (or a name the
 *   semaphore's own keys use), `permits` not an integer from 1 to 64, an unknown option
 * @example
 * const llm = semaphore(locks, "llm-calls", { permits: 3 });
 * await llm.using((permit) => callTheModel({ signal: permit.signal }), { wait: 10_000 });
 */
export function semaphore(locks: Locks, key: string, options: SemaphoreOptions): Semaphore {
  const core = isLocks(locks) ? coreOf(locks) : undefined;
  if (core === undefined) {
    throw new ConfigurationError("locks", "expected the manager from createLocks()");
  }
  // The lock's key rules, which also refuse the names of a semaphore's own keys.
  checkKey(key, core.options.fencing);
  checkKnown(options, OPTIONS, "semaphore() (it takes permits)");
  return new SlotsSemaphore(core, key, checkPermits(options.permits));
}

/**
 * `permits` as {@link semaphore} takes it: an integer from 1 to {@link MAX_PERMITS}. For wrappers
 * that build their semaphore per request (`limit()`, `withLimit`) to refuse a bad count when they
 * are built.
 *
 * @throws {ConfigurationError} naming `permits`
 * @example
 * checkPermits(options.permits);
 */
export function checkPermits(permits: unknown): number {
  if (
    !Number.isSafeInteger(permits) ||
    (permits as number) < 1 ||
    (permits as number) > MAX_PERMITS
  ) {
    throw new ConfigurationError(
      "permits",
      `expected an integer from 1 to ${MAX_PERMITS}, got ${shown(permits)}`,
    );
  }
  return permits as number;
}

/** See {@link semaphore}. */
class SlotsSemaphore implements Semaphore {
  readonly #core: LockCore;

  constructor(
    core: LockCore,
    readonly key: string,
    readonly permits: number,
  ) {
    this.#core = core;
  }

  acquire(options?: AcquireOptions): Promise<Permit> {
    return this.#acquire(options, false);
  }

  async #acquire(
    options: AcquireOptions | undefined,
    autoExtend: boolean,
    wait?: number,
  ): Promise<Permit> {
    const core = this.#core;
    const call = resolveCall(core.options, options, autoExtend, wait ?? core.options.wait);
    call.signal?.throwIfAborted();
    const plan = this.#plan();
    // As a lock's acquire: an abort rejects at once, and a permit granted after it is released.
    const orphan = ({ grant }: PermitGrant) => {
      void new LockHandle(core, grant, call.budget, false).release().catch(() => {});
    };
    const { grant, slot } = await abortable(acquirePermit(core, plan, call), call.signal, orphan);
    return new PermitHandle(
      new LockHandle(core, grant, call.budget, call.autoExtend),
      slot,
      this.permits,
    );
  }

  async tryAcquire(options?: Omit<AcquireOptions, "wait">): Promise<Permit | null> {
    const once = lookOnce(options) as AcquireOptions;
    try {
      return await this.acquire(once);
    } catch (error) {
      if (isLockBusyError(error)) return null;
      throw error;
    }
  }

  async using<T>(fn: (permit: Permit) => Promise<T> | T, options?: AcquireOptions): Promise<T> {
    if (typeof fn !== "function") {
      throw new ConfigurationError("fn", "expected a function (permit) => result");
    }
    const permit = await this.#acquire(options, true, this.#core.options.usingWait);
    try {
      return await fn(permit);
    } finally {
      // release() never throws; the guard keeps fn's own error from ever being masked.
      await permit.release().catch(() => {});
    }
  }

  async inspect(): Promise<SemaphoreInspection> {
    const core = this.#core;
    const keys = semaphoreKeys(core.options.prefix, this.key, this.permits);
    const timeoutMs = core.options.requestTimeout ?? 1_000;
    const round = await inspectRound(core, keys, timeoutMs);
    const nodes = await round.settled;
    const q = core.quorum;
    const slots = keys.slots.map((_, slot) => {
      const pttls = core.nodes.map(({ index }) => round.values.get(index)?.[slot]);
      const live = pttls.filter((p): p is number => p !== undefined && p !== -2);
      // Held on a majority until the Q-th longest of its holders' PTTLs (no expiry: -1).
      const ends = live.map((p) => (p === -1 ? Number.POSITIVE_INFINITY : p)).sort((a, b) => b - a);
      const end = ends[q - 1];
      const held = end !== undefined;
      // Free only where a majority answered it absent: a failed node is not a free slot.
      const free = pttls.filter((p) => p === -2).length >= q;
      const retryAfter = free ? 0 : held && Number.isFinite(end) ? end : -1;
      return { slot, held, free, retryAfter };
    });
    const held = slots.filter((s) => s.held).length;
    const free = slots.filter((s) => s.free).length;
    const known = slots.filter((s) => s.held || s.free);
    const soonest = Math.min(
      ...known.map((s) => (s.retryAfter === -1 ? Number.POSITIVE_INFINITY : s.retryAfter)),
    );
    // A slot known free, or one held with an expiry, bounds the wait; held slots without one
    // say -1 only when every slot is known (an unknown one might be free now).
    const retryAfter = Number.isFinite(soonest)
      ? soonest
      : known.length === slots.length
        ? -1
        : undefined;
    return { key: this.key, permits: this.permits, held, free, retryAfter, slots, nodes };
  }

  /** A call's plan: the keys, and its order of slots, a rotation drawn at random per call. */
  #plan(): SlotsPlan {
    const keys = semaphoreKeys(this.#core.options.prefix, this.key, this.permits);
    const offset = crypto.getRandomValues(new Uint32Array(1))[0] as number;
    const order = keys.slots.map((_, j) => (j + offset) % this.permits);
    return { name: this.key, keys, order };
  }
}
