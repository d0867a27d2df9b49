/**
 * The shapes every edgelock error is built from, which refer to each other: a node's outcome in a
 * round (`NodeOutcome`, whose failure is a `TransportError`), the base class `LockError` (which
 * carries outcomes) and `TransportError` itself. The other error classes and the guards are in
 * `errors.ts`; the words for outcomes in `report.ts`.
 *
 * @module
 */

/**
 * What one node answered in one round (acquire, extend, release, fence raise, inspect).
 *
 * - `"ok"`: the node did what was asked (granted, extended, released, raised, answered).
 * - `"held"`: the key is held by another token on that node.
 * - `"absent"`: the key does not exist there (expired or never set).
 * - `"done"`: the key holds the done marker of a finished `once()` job (`pttl`: how long the
 *   marker is still kept). An acquire that meets it fails as busy.
 * - `"timeout"`: no answer within the per-request timeout.
 * - `"error"`: HTTP error, network failure or a reply of the wrong shape (see `error`).
 * - `"pending"`: still in flight when the round was decided (a slow minority).
 */
export type NodeStatus = "ok" | "held" | "absent" | "done" | "timeout" | "error" | "pending";

/**
 * Per-node result of one round. Never contains a token.
 *
 * @example
 * { index: 2, host: "eu1-x.upstash.io", status: "held", latencyMs: 41.2, pttl: 5300 }
 */
export interface NodeOutcome {
  /** Position of the node in the `nodes` option. */
  readonly index: number;
  /** Host (and port) of the node's REST URL, or `node<index>` when unknown. */
  readonly host: string;
  readonly status: NodeStatus;
  /** Round-trip time in ms (monotonic clock); absent while `pending`. */
  readonly latencyMs?: number;
  /** Remaining time of the key on that node in ms, when the node reported it. */
  readonly pttl?: number;
  /** The node's fence counter, when fencing is on (acquire, inspect). */
  readonly fence?: number;
  /**
   * `held` by a release's short reservation for the waiter it woke (`wake`), who is about to
   * take the key; `pttl` is the reservation's.
   */
  readonly reserved?: true;
  /** The transport failure behind `"timeout"` / `"error"`. */
  readonly error?: TransportError;
}

/** Options shared by every {@link LockError} constructor. */
export interface LockErrorOptions {
  readonly cause?: unknown;
  readonly outcomes?: readonly NodeOutcome[];
  /** What the `key` of a keyed error names: a lock (default), or a semaphore (its permits'). */
  readonly subject?: ErrorSubject | undefined;
}

/** What a keyed error's `key` names: a lock, or a semaphore (the errors of its permits). */
export type ErrorSubject = "lock" | "semaphore";

/**
 * Base class of every edgelock error.
 *
 * @example
 * try { await locks.acquire("k"); } catch (e) { if (isLockError(e)) console.log(e.name, e.outcomes); }
 */
export class LockError extends Error {
  override name = "LockError";
  /** Per-node outcomes of the round that failed (empty when no node was involved). */
  declare readonly outcomes: readonly NodeOutcome[];

  constructor(message: string, options: LockErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.outcomes = options.outcomes ?? [];
  }
}

/** How a request to one node failed. */
export type TransportErrorKind = "timeout" | "network" | "server" | "reply" | "auth";

/**
 * One request to one node failed: `"timeout"` (no answer in time), `"network"` (connection refused,
 * reset, DNS), `"server"` (the node answered with an error), `"reply"` (unparsable or wrong-shaped
 * reply), `"auth"` (the node rejected the token, HTTP 401/403: a configuration fault that no retry
 * fixes). The message says what happened in words: `node 1 (eu1-x.upstash.io): no answer within
 * 500 ms`, `… unreachable (fetch failed: ECONNREFUSED)` (`fetch failed: bad port`: fetch's cause), `… rejected the token (HTTP 401
 * Unauthorized): check this node's token`, `… error reply: ERR …`, `… unexpected reply (…)`. Names the node by `node` index and `host`, never by token or full URL. Found in
 * `NodeOutcome.error`.
 *
 * @example
 * err.outcomes.filter((o) => o.error?.kind === "timeout").map((o) => o.host)
 */
export class TransportError extends LockError {
  override name = "TransportError";
  /** Index of the node in the `nodes` option. */
  declare readonly node: number;
  /** Host (and port) of the node. */
  declare readonly host: string;
  declare readonly kind: TransportErrorKind;

  constructor(
    node: number,
    host: string,
    kind: TransportErrorKind,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(`node ${node} (${host}): ${message}`, options);
    this.node = node;
    this.host = host;
    this.kind = kind;
  }
}
