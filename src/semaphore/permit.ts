import type { ExtendResult, Lock, ReleaseOptions, ReleaseResult } from "../lock";

/** `Symbol.asyncDispose`, or the registered symbol where it is missing (as the lock handle's). */
const asyncDispose: typeof Symbol.asyncDispose =
  // biome-ignore lint/suspicious/noExplicitAny: the symbol may be missing at runtime
  (Symbol as any).asyncDispose ?? Symbol.for("Symbol.asyncDispose");

/**
 * One permit of a semaphore: a {@link Lock} on one slot, without `ticket()` (a permit is not
 * handed to another invocation in this version), plus the slot it holds and the semaphore's
 * count. `release()`, `extend()`, auto-extension, `signal`, `validUntil` and `await using` are a
 * lock's: the permit's validity is the slot's grant (docs/SAFETY.md §4c), and `signal` aborts
 * before it ends.
 *
 * @example
 * const permit = await llm.acquire({ wait: 10_000 });
 * try { await callTheModel({ signal: permit.signal }); } finally { await permit.release(); }
 */
export interface Permit extends Omit<Lock, "ticket"> {
  /** The slot held, 0 … `permits` − 1 (for logs: any free slot is as good). */
  readonly slot: number;
  /** The semaphore's permit count. */
  readonly permits: number;
  /** Always `undefined`: permits carry no fence (holders are concurrent by design). */
  readonly fence: undefined;
}

/**
 * The permit over the lock handle that holds its slot: every call goes to the handle, whose life,
 * timers and extension are the lock's; `keys` is the slot's key.
 *
 * @example
 * return new PermitHandle(new LockHandle(core, grant, call.budget, call.autoExtend), slot, P);
 */
export class PermitHandle implements Permit {
  readonly fence = undefined;

  constructor(
    private readonly lock: Lock,
    readonly slot: number,
    readonly permits: number,
  ) {}

  get key(): string {
    return this.lock.key;
  }

  get keys(): readonly string[] {
    return this.lock.keys;
  }

  get token(): string {
    return this.lock.token;
  }

  get validUntil(): number {
    return this.lock.validUntil;
  }

  get signal(): AbortSignal {
    return this.lock.signal;
  }

  extend(lease?: number): Promise<ExtendResult> {
    return this.lock.extend(lease);
  }

  release(options?: ReleaseOptions): Promise<ReleaseResult> {
    return this.lock.release(options);
  }

  [asyncDispose](): Promise<void> {
    return this.lock[asyncDispose]();
  }
}
