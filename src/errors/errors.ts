/**
 * Typed errors of edgelock, and name-based guards that work across realms and duplicate package
 * copies (where `instanceof` fails).
 *
 * Every error extends {@link LockError} (in `base.ts`, with `TransportError`), carries a stable `name`, the standard `cause`, and, where
 * nodes were involved, the per-node outcomes. No error ever contains a lock token, a REST token or
 * a full node URL: nodes are named by index and host.
 *
 * @module
 */

import {
  type ErrorSubject,
  LockError,
  type LockErrorOptions,
  type NodeOutcome,
  type TransportError,
} from "./base";
import { describeNodes } from "./report";

/**
 * The lock is held by someone else (after waiting, if `wait` was given).
 * `retryAfter` is the holders' remaining time in ms: when a majority of nodes will be free at the
 * latest (use it for `Retry-After`). A key whose `once()` job finished also fails this way: some
 * outcome then has status `"done"`, and `retryAfter` is the done marker's remaining retention.
 *
 * @example
 * catch (e) { if (isLockBusyError(e)) return new Response(null, { status: 409,
 *   headers: { "Retry-After": String(Math.ceil(e.retryAfter / 1000)) } }); }
 */
export class LockBusyError extends LockError {
  override name = "LockBusyError";
  declare readonly key: string;
  /** Milliseconds until the current holder's grant runs out (upper bound; it may release earlier). */
  declare readonly retryAfter: number;
  /** What `key` names: `"lock"`, or `"semaphore"` (a {@link SemaphoreBusyError}). */
  declare readonly subject: ErrorSubject;

  constructor(key: string, retryAfter: number, options: LockBusyErrorOptions = {}) {
    super(busyMessage(key, retryAfter, options.outcomes ?? [], options.lastRound), options);
    this.key = key;
    this.retryAfter = retryAfter;
    this.subject = options.subject ?? "lock";
  }
}

/** Options of {@link LockBusyError}. */
export interface LockBusyErrorOptions extends LockErrorOptions {
  /**
   * When `outcomes` are a probe's (one node asked while waiting): the outcomes of the last round
   * on every node, which the message reports as the state of the cluster. Default: none.
   */
  readonly lastRound?: readonly NodeOutcome[];
}

/**
 * `lock "k" is busy: held on 2 of 3 nodes, free in at most 4200 ms (node 0 (…): held by another
 * caller for 4200 ms more; …)`; a finished `once()` job says so; without outcomes (the caller
 * waited behind a grant of its own `Locks`) only the time is known. After a probe, the counts are
 * the last full round's, and the probe is named as such: one node says nothing of a majority.
 */
function busyMessage(
  key: string,
  retryAfter: number,
  outcomes: readonly NodeOutcome[],
  lastRound: readonly NodeOutcome[] = [],
): string {
  if (lastRound.length > 0 && outcomes.every((o) => o.status === "held")) {
    const held = lastRound.filter((o) => o.status === "held").length;
    return `lock "${key}" is busy: held on ${held} of ${lastRound.length} nodes in the last full round, free in at most ${retryAfter} ms (last probe: ${describeNodes(outcomes)}; last full round: ${describeNodes(lastRound)})`;
  }
  const asked = outcomes.length;
  const done = outcomes.filter((o) => o.status === "done").length;
  const held = outcomes.filter((o) => o.status === "held").length;
  const nodes = describeNodes(outcomes);
  const detail = nodes === "" ? "" : ` (${nodes})`;
  if (done > 0) {
    return `lock "${key}" is busy: its once() job is done (done marker on ${done} of ${asked} nodes, kept ${retryAfter} ms more)${detail}`;
  }
  if (asked === 0) return `lock "${key}" is busy; the holder's grant ends in ${retryAfter} ms`;
  return `lock "${key}" is busy: held on ${held} of ${asked} nodes asked, free in at most ${retryAfter} ms${detail}`;
}

/** What a handle's loss or end names: the lock, or the permit of a semaphore. */
const holderOf = (subject: ErrorSubject): string =>
  subject === "lock" ? "lock" : "permit of semaphore";

/**
 * Too many nodes failed (timeouts, HTTP or network errors) for a majority to answer.
 *
 * @example
 * catch (e) { if (isQuorumError(e)) console.warn(e.outcomes.map((o) => o.error?.message)); }
 */
export class QuorumError extends LockError {
  override name = "QuorumError";
  declare readonly key: string;
  /** What `key` names: `"lock"`, or `"semaphore"` for a permit's round. */
  declare readonly subject: ErrorSubject;

  constructor(key: string, message: string, options: LockErrorOptions = {}) {
    const subject = options.subject ?? "lock";
    super(`${subject} "${key}": ${message}`, options);
    this.key = key;
    this.subject = subject;
  }
}

/**
 * The lock is no longer ours: it expired, another holder took it, its validity or the budget's
 * deadline ran out. This is the `reason` of `lock.signal` when it aborts.
 *
 * @example
 * lock.signal.addEventListener("abort", () => console.warn(lock.signal.reason)); // LockLostError
 */
export class LockLostError extends LockError {
  override name = "LockLostError";
  declare readonly key: string;
  /** What `key` names: `"lock"`, or `"semaphore"` for a permit (its message says `permit of`). */
  declare readonly subject: ErrorSubject;

  constructor(key: string, message: string, options: LockErrorOptions = {}) {
    const subject = options.subject ?? "lock";
    super(`${holderOf(subject)} "${key}" lost: ${message}`, options);
    this.key = key;
    this.subject = subject;
  }
}

/** How a lock ended without being lost: see {@link LockEndedError}. */
export type LockEnd = "released" | "handed-on" | "completed";

/**
 * The lock ended because its holder ended it: `release()` (also `using()` or a wrapper returning),
 * `ticket()` (the lock went to another invocation), or a `once()` / Idempotency-Key run completing
 * it. This is the `reason` of `lock.signal` when it aborts for that; a loss aborts it with
 * {@link LockLostError} instead. Either way the work it guards is no longer protected by this handle.
 *
 * @example
 * lock.signal.addEventListener("abort", () => {
 *   if (isLockEndedError(lock.signal.reason)) console.log(lock.signal.reason.how); // "released"
 * });
 */
export class LockEndedError extends LockError {
  override name = "LockEndedError";
  declare readonly key: string;
  /** `"released"`, `"handed-on"` (a ticket) or `"completed"` (a done marker). */
  declare readonly how: LockEnd;
  /** What `key` names: `"lock"`, or `"semaphore"` for a permit. */
  declare readonly subject: ErrorSubject;

  constructor(key: string, how: LockEnd, options: LockErrorOptions = {}) {
    const what =
      how === "released"
        ? "released by its holder"
        : how === "handed-on"
          ? "handed on as a ticket"
          : "completed (done marker written)";
    const subject = options.subject ?? "lock";
    super(`${holderOf(subject)} "${key}" ended: ${what}`, options);
    this.key = key;
    this.how = how;
    this.subject = subject;
  }
}

/**
 * The execution budget cannot cover the operation (time left or subrequests). Thrown before any
 * node is called.
 *
 * @example
 * await locks.acquire("k", { budget: budget.within(0) }); // throws BudgetExhaustedError
 */
export class BudgetExhaustedError extends LockError {
  override name = "BudgetExhaustedError";
  /** Milliseconds left until the budget's deadline when the check failed. */
  declare readonly remainingMs: number;
  /** Subrequests left in the allowance (`Infinity` without an allowance). */
  declare readonly remainingSubrequests: number;

  constructor(
    message: string,
    remainingMs: number,
    remainingSubrequests: number,
    options: LockErrorOptions = {},
  ) {
    super(message, options);
    this.remainingMs = remainingMs;
    this.remainingSubrequests = remainingSubrequests;
  }
}

/** Options of the {@link ConfigurationError} constructor. */
export interface ConfigurationErrorOptions extends LockErrorOptions {
  /** `option` names an environment variable (default `false`: an option of the API). */
  readonly variable?: boolean;
}

/**
 * An option (of `createLocks`, a call, or a budget factory) or an environment variable (read by
 * `nodesFromEnv`) is invalid; `option` names it, `variable` tells which of the two it is.
 *
 * @example
 * createLocks({ nodes: [] }); // ConfigurationError, option "nodes": invalid option `nodes`: …
 * nodesFromEnv({ EDGELOCK_NODES: "[]" }); // invalid environment variable `EDGELOCK_NODES`: …
 */
export class ConfigurationError extends LockError {
  override name = "ConfigurationError";
  /** The option's path, e.g. `"lease"` or `"nodes[2]"`, or the variable's (`"EDGELOCK_NODES[0].url"`). */
  declare readonly option: string;
  /** `true` when `option` is an environment variable rather than an option of the API. */
  declare readonly variable: boolean;

  constructor(option: string, message: string, options: ConfigurationErrorOptions = {}) {
    const what = options.variable === true ? "environment variable" : "option";
    super(`invalid ${what} \`${option}\`: ${message}`, options);
    this.option = option;
    this.variable = options.variable === true;
  }
}

const NAMES = new Set([
  "LockError",
  "LockBusyError",
  "SemaphoreBusyError",
  "QuorumError",
  "LockLostError",
  "LockEndedError",
  "BudgetExhaustedError",
  "ConfigurationError",
  "TransportError",
]);

function hasName(value: unknown, name: string): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { name?: unknown }).name === name &&
    typeof (value as { message?: unknown }).message === "string"
  );
}

/**
 * True for any edgelock error, also from another realm or package copy (checks `name`, not
 * `instanceof`). The `is…Error` guards below work the same way for one class each.
 *
 * @example
 * if (isLockError(e)) console.log(e.name, e.outcomes);
 */
export function isLockError(value: unknown): value is LockError {
  return (
    typeof value === "object" &&
    value !== null &&
    NAMES.has((value as { name?: unknown }).name as string) &&
    typeof (value as { message?: unknown }).message === "string"
  );
}
/** True for a {@link LockBusyError} (by name), a semaphore's `SemaphoreBusyError` included. */
export const isLockBusyError = (value: unknown): value is LockBusyError =>
  hasName(value, "LockBusyError") || hasName(value, "SemaphoreBusyError");
/** True for a {@link QuorumError} (by name). */
export const isQuorumError = (value: unknown): value is QuorumError =>
  hasName(value, "QuorumError");
/** True for a {@link LockLostError} (by name). */
export const isLockLostError = (value: unknown): value is LockLostError =>
  hasName(value, "LockLostError");
/** True for a {@link LockEndedError} (by name). */
export const isLockEndedError = (value: unknown): value is LockEndedError =>
  hasName(value, "LockEndedError");
/** True for a {@link BudgetExhaustedError} (by name). */
export const isBudgetExhaustedError = (value: unknown): value is BudgetExhaustedError =>
  hasName(value, "BudgetExhaustedError");
/** True for a {@link ConfigurationError} (by name). */
export const isConfigurationError = (value: unknown): value is ConfigurationError =>
  hasName(value, "ConfigurationError");
/** True for a {@link TransportError} (by name). */
export const isTransportError = (value: unknown): value is TransportError =>
  hasName(value, "TransportError");
