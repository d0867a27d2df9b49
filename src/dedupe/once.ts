import type { Budget } from "../budget";
import {
  ConfigurationError,
  checkFunction,
  checkKnown,
  isLockBusyError,
  type LockBusyError,
  optionalMs,
} from "../errors";
import type { AcquireOptions, Lock, Locks } from "../lock";
import { complete, isCompletable, isLocks, owesCompletion, random, sleep } from "../lock";
import { checkRetention } from "./options";
import type { OnceOptions, OnceResult } from "./types";

const KNOWN = new Set(["lease", "retention", "budget", "signal"]);

/**
 * Extra attempts after a busy round in which we had been granted some nodes: several runs that
 * start at the same instant can split the nodes so that none reaches a majority, and with no
 * waiting the job would then run nowhere. A short random pause lets one of them win.
 */
const CONTENDED_RETRIES = 2;
/** Upper bound of the first contended pause in ms; doubles per retry. */
const CONTENDED_PAUSE = 100;

/** Acquire without waiting, retrying only a round that split between simultaneous starters. */
async function acquireOrBusy(
  locks: Locks,
  key: string,
  options: AcquireOptions,
): Promise<Lock | LockBusyError> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await locks.acquire(key, options);
    } catch (error) {
      if (!isLockBusyError(error)) throw error;
      const outcomes = error.outcomes;
      const split =
        outcomes.some((o) => o.status === "ok") && !outcomes.some((o) => o.status === "done");
      if (!split || attempt >= CONTENDED_RETRIES) return error;
      await sleep(Math.floor(random() * CONTENDED_PAUSE * 2 ** attempt), options.signal);
    }
  }
}

/**
 * Run `fn` at most once per `key` (for its `retention`): the job of "a trigger that fires at least
 * once runs at most once per scheduled time".
 *
 * Acquires `key` with `wait: 0` and auto-extension. Then:
 * - `fn(lock)` succeeds: the lock is not released but turned into a done marker (`done:<token>`,
 *   kept `retention` ms) on every node, in one round; returns `{ status: "ran", value, recorded }`
 *   once every node answered that round or its request timed out (not at the first majority).
 *   It never throws once `fn` has succeeded: `recorded` is false when fewer than a majority of
 *   nodes took the marker (a duplicate may then run the job again).
 * - `fn` throws: the lock is released (no marker, so a retry runs the job) and the same error is
 *   rethrown once every node answered the release or timed out.
 * - the key is busy: `{ status: "skipped", reason: "done" }` when any node holds the done marker,
 *   else `reason: "running"` (another run holds it); `fn` is not called. If a round was split
 *   between runs that started at the same instant (we held some nodes, nobody a majority), it is
 *   retried up to twice after a random pause of at most 100 / 200 ms.
 *
 * The marker lives in the lock key itself, so checking it is atomic with acquiring: a plain
 * `locks.acquire(key)` on a finished job's key fails with `LockBusyError` (`retryAfter` = the
 * marker's PTTL) and `locks.forceRelease(key)` deletes it (to run the job again on purpose).
 * Uncontended cost: 2N node requests (acquire + complete), plus N per auto-extension.
 *
 * At most once is as strong as the lock: a run that outlives its lock (it ignored `lock.signal`,
 * or a majority of nodes lost the key) can overlap a duplicate.
 *
 * The lock cannot be handed on: `lock.ticket()` inside `fn` rejects with `ConfigurationError`
 * (option `ticket`) and the lock stays held, since the done marker is written with this run's
 * token when `fn` returns. With `fencing`, the key's fence counter expires with the marker (or
 * `retention` after a failed run's release) instead of living forever.
 *
 * Defaults: `lease` from `createLocks` (10000 ms), `retention` 86400000 ms (24 h), no budget.
 *
 * @param locks the manager from `createLocks`
 * @param key one key per job occurrence, e.g. `` `report:${scheduledTime}` `` (without prefix)
 * @param fn the job; stop when `lock.signal` aborts (the lock was lost or the budget runs out)
 * @throws {QuorumError} too many nodes failed to answer the acquire (`fn` not called)
 * @throws {BudgetExhaustedError} the budget cannot cover the acquire (no node called)
 * @throws {ConfigurationError} invalid key or option (names it)
 * @throws whatever `fn` throws, unchanged, after the release
 * @example
 * import { createLocks, once } from "edgelock";
 * const result = await once(locks, `invoice-run:${date}`, async (lock) => sendInvoices({ signal: lock.signal }), {
 *   lease: 30_000,
 *   retention: 7 * 24 * 60 * 60 * 1000,
 * });
 * if (result.status === "skipped") console.log(`already ${result.reason}`);
 */
export async function once<T>(
  locks: Locks,
  key: string,
  fn: (lock: Lock) => Promise<T> | T,
  options: OnceOptions = {},
): Promise<OnceResult<T>> {
  if (!isLocks(locks)) {
    throw new ConfigurationError("locks", "expected the manager from createLocks()");
  }
  if (typeof key !== "string") {
    // A done marker is one key's state: COMPLETE writes the lock's first key only.
    throw new ConfigurationError("key", "once() takes one key (a string), not an array");
  }
  checkFunction("fn", fn);
  checkKnown(options, KNOWN, "once");
  const retention = checkRetention(options.retention);
  const lease = optionalMs("lease", options.lease, 1);
  const budget: Budget | undefined = options.budget;
  const acquire: AcquireOptions = {
    wait: 0,
    autoExtend: true,
    ...(lease === undefined ? {} : { lease }),
    ...(budget === undefined ? {} : { budget }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };

  const lock = await acquireOrBusy(locks, key, acquire);
  if (isLockBusyError(lock)) {
    const done = lock.outcomes.some((o) => o.status === "done");
    return { status: "skipped", reason: done ? "done" : "running", retryAfter: lock.retryAfter };
  }
  if (!isCompletable(lock)) {
    await lock.release().catch(() => undefined);
    throw new ConfigurationError("locks", "expected the manager from createLocks()");
  }
  owesCompletion(lock, "once()", retention);

  let value: T;
  try {
    value = await fn(lock);
  } catch (error) {
    // No marker: a retry of this trigger must be able to run the job. Every node's answer is
    // awaited (not only a majority's): the wrappers return right after, and a frozen Lambda
    // environment or an ended scheduled event would drop a release still in flight, leaving
    // that node's key until its TTL. Never throws.
    await lock.release({ settled: true }).catch(() => undefined);
    throw error;
  }
  // The job succeeded: whatever the nodes do now, report it (never throw after a run).
  const { recorded } = await complete(lock, retention).catch(() => ({ recorded: false }));
  // Every node's answer to COMPLETE, not only the majority's that decided `recorded`: the
  // wrappers return right after, and a frozen Lambda environment or an ended scheduled event
  // would drop a COMPLETE still in flight, leaving that node holding the run's token instead of
  // the marker. After a completion, a settled release sends nothing: it waits for those answers
  // (each bounded by its request timeout). Never throws.
  await lock.release({ settled: true }).catch(() => undefined);
  return { status: "ran", value, recorded };
}
