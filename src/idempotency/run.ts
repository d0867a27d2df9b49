import type { Budget } from "../budget";
import {
  type BudgetExhaustedError,
  ConfigurationError,
  isBudgetExhaustedError,
  isLockBusyError,
  isLockLostError,
  isQuorumError,
  type QuorumError,
} from "../errors";
import type { Lock, Locks } from "../lock";
import {
  completePersistently,
  coreOf,
  isCompletable,
  owesCompletion,
  random,
  recordRound,
  sleep,
  waitEnd,
} from "../lock";
import { freeAfter } from "../quorum";
import { defaultFingerprint, defaultScope, sha256 } from "./digest";
import { IDEMPOTENCY_KEY, parseKey } from "./header";
import type { ResolvedIdempotency } from "./options";
import {
  alreadyProcessed,
  inProgress,
  invalidKey,
  keyReused,
  missingKey,
  type ProblemAnswer,
  unavailable,
} from "./problems";
import { decodeRecord, encodeRecord, type IdempotencyRecord, type StoredResponse } from "./record";
import { reportUnavailable, routeOf } from "./unavailable-log";

/** The request as the idempotency layer needs it, whatever the runtime. */
export interface IdempotentRequest<C> {
  /** What the option callbacks (`locks`, `scope`, `fingerprint`, `budget`) get. */
  readonly context: C;
  readonly method: string;
  /** Path with query string. */
  readonly path: string;
  /** The request's authority (host and port as sent), part of the default scope. */
  readonly host?: string | undefined;
  /** A request header (case-insensitive), `undefined` when absent. */
  header(name: string): string | undefined;
  /** The request body's bytes (read once; the handler can still read it). */
  body(): Promise<Uint8Array>;
  /** The platform's default budget when the `budget` option is not set. */
  readonly budget?: Budget | undefined;
  /**
   * Keeps the invocation alive for a promise (Workers' `waitUntil`). Without it, a released claim
   * is answered only once every node answered the release (a frozen or ended invocation would cut
   * a request off and leave the key until its TTL); with it, once a majority did, the rest under
   * `waitUntil`.
   */
  readonly waitUntil?: ((settled: Promise<unknown>) => void) | undefined;
}

/** What the handler answered: its response for this request, and how to store it. */
export interface HandlerAnswer<R> {
  readonly result: R;
  readonly status: number;
  /**
   * A lock layer's own answer — `lock()`'s problem+json, or whatever its `onBusy`/`onError` or
   * a `withLock`'s `onBusy` returned: never kept (SAFETY.md §6b, I4).
   */
  readonly transient?: boolean;
  /**
   * Read the response to store it (called only when it is kept: `store(status)`, claim held).
   * May resolve late (a streamed body, once sent); a rejection (a body that could not be read
   * whole, or one over `maxBody`) keeps the answer as "completed without replay".
   */
  capture(): Promise<StoredResponse>;
}

/**
 * What the layer decided. `pass`: not for it (method, no key); run the handler as usual. `problem`:
 * answer it, the handler was not run. `replay`: answer the stored response, with
 * `Idempotency-Replayed: true`. `ran`: the handler ran under the claim; answer its own result.
 */
export type IdempotentOutcome<R> =
  | { readonly kind: "pass" }
  | { readonly kind: "problem"; readonly problem: ProblemAnswer }
  | { readonly kind: "replay"; readonly response: StoredResponse }
  | { readonly kind: "ran"; readonly result: R; readonly stored: boolean };

/** Lock keys live under this namespace; the client's key is hashed (no suffix can collide). */
const NAMESPACE = "idempotency:";

/** First and longest pause between looks while a duplicate waits (`wait`), ms. */
const WAIT_STEP = 50;
const WAIT_STEP_MAX = 1_000;

/** Allow-listed headers of a response, lower-cased. */
export function keptHeaders(
  headers: Iterable<[string, string]>,
  allow: ReadonlySet<string>,
): [string, string][] {
  const kept: [string, string][] = [];
  for (const [name, value] of headers) {
    if (allow.has(name.toLowerCase())) kept.push([name.toLowerCase(), value]);
  }
  return kept;
}

interface Lookup {
  readonly record: IdempotencyRecord | undefined;
  /** A marker without a record we can read: completed, not replayable. */
  readonly doneWithout: boolean;
  /** Nodes held by the claim of a request still running, with their PTTL. */
  readonly running: number | undefined;
}

/** Read the key's record: any node holding one is enough (only the claim holder writes it). */
async function lookup(locks: Locks, key: string, budget: Budget | undefined): Promise<Lookup> {
  const core = coreOf(locks);
  if (core === undefined) {
    throw new ConfigurationError("locks", "expected the manager from createLocks()");
  }
  const timeout = core.timeoutFor(core.options.lease);
  const round = await recordRound(core, core.keys(key), timeout, budget);
  for (const text of round.values.values()) {
    const record = decodeRecord(text);
    if (record !== undefined) return { record, doneWithout: false, running: undefined };
  }
  if (round.ok) return { record: undefined, doneWithout: true, running: undefined };
  const held = round.outcomes.filter((o) => o.status === "held");
  const n = core.nodes.length;
  // Only when holders alone rule out a majority is the key surely claimed (as for LockBusyError).
  if (held.length <= n - core.quorum)
    return { record: undefined, doneWithout: false, running: undefined };
  const absent = round.outcomes.filter((o) => o.status === "absent").length;
  const pttls = held.map((o) => o.pttl ?? -1);
  const running = freeAfter(pttls, absent, core.quorum) ?? Math.max(0, ...pttls);
  return { record: undefined, doneWithout: false, running };
}

/** The answer a completed record gives this request. */
function fromRecord<R>(record: IdempotencyRecord, fingerprint: string): IdempotentOutcome<R> {
  if (record.fingerprint !== fingerprint) return { kind: "problem", problem: keyReused() };
  if (record.response === undefined) {
    return { kind: "problem", problem: alreadyProcessed(record.status) };
  }
  return { kind: "replay", response: record.response };
}

/** The 503 of a lookup or claim the nodes could not decide, after its server log line. */
async function failed<C, R>(
  options: ResolvedIdempotency<C>,
  request: IdempotentRequest<C>,
  key: string,
  error: QuorumError | BudgetExhaustedError,
): Promise<IdempotentOutcome<R>> {
  const route = routeOf(request.method, request.path);
  const info = { route, key, error, subject: "lock" } as const;
  await reportUnavailable(options.onUnavailable, request.context, info);
  return {
    kind: "problem",
    problem: unavailable(error.name, error.message, options.exposeDetails),
  };
}

/**
 * Run `handler` at most once per (scope, `Idempotency-Key`) while its record is kept: claim the
 * key with a quorum lock (TTL from the budget, auto-extended), run the handler, and keep its
 * response in the key's done marker on the nodes; a later request with the same key and
 * fingerprint gets that response replayed, one with another fingerprint a 422, one arriving while
 * the first runs a 409 (or waits up to `wait` ms for the result). A 5xx, a throw, a lost claim
 * or an answer `store` refuses (by default 408, 409, 425, 429) stores nothing and releases the
 * claim, so a retry runs again. A kept answer's record is re-sent until a majority holds it,
 * while the claim is valid; if it cannot be, `onUnrecorded` is called and the claim is left to
 * expire (never released). Runtime-neutral: the Hono and Lambda adapters map requests and
 * answers.
 *
 * Cost: a first request N (record lookup) + N (claim) + N (record; N more per re-send), plus N
 * per extension; a replay N, answered by the first node that has the record.
 *
 * @throws whatever the handler throws (after releasing the claim); `ConfigurationError` for a
 *   `locks` not from `createLocks`
 * @example
 * const outcome = await runIdempotent(resolved, request, async (lock) => answerOf(await next()));
 */
export async function runIdempotent<C, R>(
  options: ResolvedIdempotency<C>,
  request: IdempotentRequest<C>,
  handler: (lock: Lock) => Promise<HandlerAnswer<R>>,
): Promise<IdempotentOutcome<R>> {
  if (!options.methods.has(request.method.toUpperCase())) return { kind: "pass" };
  const header = request.header(IDEMPOTENCY_KEY);
  if (header === undefined) {
    return options.required ? { kind: "problem", problem: missingKey() } : { kind: "pass" };
  }
  const parsed = parseKey(header);
  if ("invalid" in parsed) return { kind: "problem", problem: invalidKey(parsed.invalid) };
  const { context } = request;
  const locks = options.locks(context);
  const scope =
    options.scope === undefined
      ? await defaultScope((name) => request.header(name), options.scopeRule, request.host)
      : await sha256("scope", String(await options.scope(context)));
  const fingerprint =
    options.fingerprint === undefined
      ? await defaultFingerprint(request.method, request.path, await request.body())
      : await sha256("fingerprint", String(await options.fingerprint(context)));
  const key = `${NAMESPACE}${scope.slice(0, 32)}:${(await sha256("key", parsed.key)).slice(0, 32)}`;
  const budget = options.budget === undefined ? request.budget : options.budget(context);
  // A duplicate waits for the first answer as any wait does: never into the budget's reserve.
  const waitUntil = waitEnd({ wait: options.wait, budget }, performance.now());
  let doneSeen = 0;

  for (let step = WAIT_STEP; ; step = Math.min(2 * step, WAIT_STEP_MAX)) {
    let found: Lookup;
    try {
      found = await lookup(locks, key, budget);
    } catch (error) {
      if (isQuorumError(error) || isBudgetExhaustedError(error)) {
        return failed(options, request, key, error);
      }
      throw error;
    }
    if (found.record !== undefined) return fromRecord(found.record, fingerprint);
    if (found.doneWithout) return { kind: "problem", problem: alreadyProcessed(undefined) };
    let retryAfter = found.running;
    if (retryAfter === undefined) {
      const claim = await claimKey(locks, key, options.lease, budget);
      if (claim === "done") {
        // Completed between the lookup and the claim: look again and replay. A marker the
        // lookup keeps missing (its node answers the claim but not the lookup) is "processed".
        doneSeen += 1;
        if (doneSeen > 2) return { kind: "problem", problem: alreadyProcessed(undefined) };
        continue;
      }
      if ("unavailable" in claim) return failed(options, request, key, claim.unavailable);
      if ("lock" in claim) {
        return runClaimed(options, request, claim.lock, fingerprint, handler);
      }
      retryAfter = claim.retryAfter;
    }
    const left = waitUntil - performance.now();
    if (left <= 0) return { kind: "problem", problem: inProgress(options.retryAfter) };
    const pause = Math.min(left, Math.max(1, Math.min(retryAfter, step)) * (0.5 + random() / 2));
    await sleep(pause);
  }
}

/**
 * Claim the key: the lock, or how long the running claim may last, `"done"` when a node already
 * has the record, or the error when the nodes cannot decide (a 503).
 */
async function claimKey(
  locks: Locks,
  key: string,
  lease: number | undefined,
  budget: Budget | undefined,
): Promise<
  | { lock: Lock }
  | { retryAfter: number }
  | "done"
  | { unavailable: QuorumError | BudgetExhaustedError }
> {
  try {
    const lock = await locks.acquire(key, {
      wait: 0,
      autoExtend: true,
      ...(lease === undefined ? {} : { lease }),
      ...(budget === undefined ? {} : { budget }),
    });
    return { lock };
  } catch (error) {
    if (isLockBusyError(error)) {
      return error.outcomes.some((o) => o.status === "done")
        ? "done"
        : { retryAfter: error.retryAfter };
    }
    if (isQuorumError(error) || isBudgetExhaustedError(error)) return { unavailable: error };
    throw error;
  }
}

/**
 * Run the handler under the claim. An answer `store` keeps (never a 5xx, a throw or a transient
 * answer) becomes the key's record, written before the claim is given up (SAFETY.md §6b I1);
 * any other answer releases the claim, so that a retry runs again (I3).
 */
/**
 * Give the claim up so that a retry runs again (I3, I4): a majority's answer always, every node's
 * before the answer goes out unless `waitUntil` keeps the invocation alive for the rest.
 */
async function giveUp(lock: Lock, waitUntil: IdempotentRequest<unknown>["waitUntil"]) {
  await settle(lock, waitUntil);
  await lock.release().catch(() => undefined);
}

/**
 * Every node's answer to every round that ended the claim (its release, or each COMPLETE of the
 * record write: after a completion a settled release sends nothing and waits for those answers):
 * awaited, or handed to `waitUntil` when the runtime keeps the invocation alive for it. A frozen
 * Lambda or an ended Workers request would drop a request still in flight, leaving that node
 * holding the claim's token (not the record) until its TTL (SAFETY.md §6b, I3). Never throws.
 */
async function settle(lock: Lock, waitUntil: IdempotentRequest<unknown>["waitUntil"]) {
  const settled = lock.release({ settled: true }).catch(() => undefined);
  if (waitUntil === undefined) await settled;
  else waitUntil(settled);
}

async function runClaimed<C, R>(
  options: ResolvedIdempotency<C>,
  request: IdempotentRequest<C>,
  lock: Lock,
  fingerprint: string,
  handler: (lock: Lock) => Promise<HandlerAnswer<R>>,
): Promise<IdempotentOutcome<R>> {
  const { context } = request;
  let answer: HandlerAnswer<R>;
  owesCompletion(lock, "the Idempotency-Key layer", options.ttl);
  try {
    answer = await handler(lock);
  } catch (error) {
    await giveUp(lock, request.waitUntil);
    throw error;
  }
  const { status } = answer;
  const kept = status < 500 && answer.transient !== true && options.store(status);
  if (!kept || isLockLostError(lock.signal.reason) || !isCompletable(lock)) {
    await giveUp(lock, request.waitUntil);
    return { kind: "ran", result: answer.result, stored: false };
  }
  let record: string;
  try {
    const response = await answer.capture();
    record = encodeRecord(fingerprint, response, response.body.length <= options.maxBody);
  } catch {
    // The handler answered, so it ran: a body we cannot read (a stream cancelled or failed
    // after its status went out, or one over maxBody) is kept as "completed without replay".
    record = encodeRecord(fingerprint, { status, headers: [], body: new Uint8Array() }, false);
  }
  // A claim lost while a streamed body was still being sent: as for a loss before (I3).
  if (lock.signal.aborted) {
    await giveUp(lock, request.waitUntil);
    return { kind: "ran", result: answer.result, stored: false };
  }
  const { recorded, outcomes } = await completePersistently(lock, options.ttl, record).catch(
    () => ({ recorded: false, outcomes: [] }),
  );
  await settle(lock, request.waitUntil);
  if (!recorded && options.onUnrecorded !== undefined) {
    try {
      await options.onUnrecorded(context, { status, outcomes });
    } catch {
      // The app's own callback: its failure changes nothing here.
    }
  }
  return { kind: "ran", result: answer.result, stored: recorded };
}
