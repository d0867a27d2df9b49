import type { Budget } from "../budget";
import {
  ConfigurationError,
  configurationFault,
  describeNodes,
  type LockEnd,
  LockEndedError,
  LockLostError,
  type NodeOutcome,
  nodeName,
  QuorumError,
  reasonOf,
} from "../errors";
import type { Round } from "../quorum";
import { drift, validity } from "../quorum";
import type { CasReply } from "../scripts";
import type { Grant } from "./acquire";
import type { LockCore } from "./core";
import { budgetShortfall } from "./failure";
import { handoverRound } from "./handover";
import { MAX_LEASE } from "./options";
import { random, sleep, unref } from "./timing";
import type { ExtendResult, Lock, LockTicket, ReleaseResult } from "./types";

/**
 * The key of the handle's `await using` disposer. Node ≥ 20.5, workerd, Bun and Deno define
 * `Symbol.asyncDispose`; where it is missing, the registered symbol esbuild's and TypeScript's
 * usual polyfills use, without patching the global (a library must not).
 */
const asyncDispose: typeof Symbol.asyncDispose =
  // biome-ignore lint/suspicious/noExplicitAny: the symbol may be missing at runtime
  (Symbol as any).asyncDispose ?? Symbol.for("Symbol.asyncDispose");

/** `handed`: turned into a ticket (`ticket()`); another invocation holds the lock from there. */
type State = "held" | "lost" | "released" | "handed";

/**
 * Result of {@link complete}: `recorded` when a majority of nodes hold the done marker (written
 * now or already there).
 */
export interface CompleteResult {
  readonly recorded: boolean;
  readonly outcomes: readonly NodeOutcome[];
}

/** Set by the class's static block: the one way in to a handle's private completion. */
let completeHandle: (
  handle: LockHandle,
  retention: number,
  record: string | undefined,
  persist?: boolean,
) => Promise<CompleteResult>;
/** Every node's answer to a handle's release (set in the class's static block). */
let releaseSettledOf: (handle: LockHandle) => Promise<unknown>;
/** Set by the class's static block: see {@link owesCompletion}. */
let markOwed: (handle: LockHandle, owed: Owed) => void;

/** A wrapper that ends the lock with {@link complete}, and its marker's retention (ms). */
interface Owed {
  readonly wrapper: string;
  readonly retention: number;
}

/**
 * A held lock (see {@link Lock}). Keeps its validity end on the monotonic clock, arms a timer that
 * aborts `signal` shortly before the validity or the budget's deadline ends, and, with
 * `autoExtend`, extends itself after a third to a half of the validity (early enough that a
 * timed-out attempt can be retried before the abort).
 */
export class LockHandle implements Lock {
  readonly key: string;
  readonly keys: readonly string[];
  readonly token: string;
  readonly fence: number | undefined;
  readonly #core: LockCore;
  readonly #grant: Grant;
  readonly #budget: Budget | undefined;
  readonly #autoExtend: boolean;
  /** Created on first use of `signal` (most locks are released without anyone reading it). */
  #controller: AbortController | undefined;
  #state: State = "held";
  #lostError: LockLostError | undefined;
  /** How the holder ended the lock (release, ticket, completion): the signal's reason then. */
  #ended: LockEndedError | undefined;
  #validUntil = 0;
  #validUntilEpoch = 0;
  #lead = 0;
  #abortTimer: ReturnType<typeof setTimeout> | undefined;
  #extendTimer: ReturnType<typeof setTimeout> | undefined;
  #extending: Promise<ExtendResult> | undefined;
  #releasing: Promise<ReleaseResult> | undefined;
  /** Every node's answer to the release (or its timeout), once the release was sent. */
  #releaseSettled: Promise<unknown> = Promise.resolve();
  /** An extension found our token gone or taken over on a majority. */
  #gone = false;
  #completing: Promise<CompleteResult> | undefined;
  #ticketing: Promise<LockTicket> | undefined;
  /** Held by a wrapper that completes it (see {@link owesCompletion}). */
  #owed: Owed | undefined;

  static {
    completeHandle = (handle, retention, record, persist = false) => {
      handle.#completing ??= handle.#completeOnce(retention, record, persist);
      handle.#end("completed");
      return handle.#completing;
    };
    releaseSettledOf = (handle) => handle.#releaseSettled;
    markOwed = (handle, owed) => {
      handle.#owed = owed;
    };
  }

  constructor(core: LockCore, grant: Grant, budget: Budget | undefined, autoExtend: boolean) {
    this.#core = core;
    this.#grant = grant;
    this.#budget = budget;
    this.#autoExtend = autoExtend;
    this.key = grant.key;
    this.keys = grant.names;
    this.token = grant.token;
    this.fence = grant.fence;
    this.#setValidity(grant.validUntil);
  }

  get validUntil(): number {
    return this.#validUntilEpoch;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      // Lost or ended before anyone asked: hand out an aborted signal with the same reason.
      const reason = this.#lostError ?? this.#ended;
      if (reason !== undefined) this.#controller.abort(reason);
    }
    return this.#controller.signal;
  }

  /** Record a new validity end; re-arm the abort timer and the next auto-extension. */
  #setValidity(validUntil: number): void {
    const now = performance.now();
    const span = validUntil - now;
    this.#validUntil = validUntil;
    this.#validUntilEpoch = Date.now() + span;
    this.#grant.local.renew(validUntil);
    // Abort early enough for the work to notice and stop: one request timeout, but never more
    // than a quarter of the validity.
    this.#lead = Math.max(1, Math.min(this.#grant.timeoutMs, Math.floor(span / 4)));
    if (this.#abortTimer !== undefined) clearTimeout(this.#abortTimer);
    const validityEnd = validUntil - this.#lead;
    const deadlineEnd =
      this.#budget === undefined ? Number.POSITIVE_INFINITY : this.#budget.deadline - this.#lead;
    const reason = validityEnd <= deadlineEnd ? "validity" : "deadline";
    this.#abortTimer = setTimeout(
      () => {
        const message =
          reason === "validity"
            ? "its validity is running out"
            : "the execution budget's deadline is near";
        this.#lose(reason, new LockLostError(this.key, message));
      },
      Math.max(0, Math.min(validityEnd, deadlineEnd) - now),
    );
    unref(this.#abortTimer);
    if (this.#autoExtend) {
      // Extend early enough that an attempt timing out still leaves time for a second one before
      // the abort, but not more often than every third of the validity (nor later than half).
      const timeout = this.#core.timeoutFor(this.#grant.lease);
      const roomy = span - this.#lead - 2 * timeout;
      this.#scheduleExtension(Math.min(span / 2, Math.max(span / 3, roomy)));
    }
  }

  #scheduleExtension(delay: number): void {
    if (this.#extendTimer !== undefined) clearTimeout(this.#extendTimer);
    if (this.#state !== "held") return;
    // A lock that already lasts past the budget's deadline gains nothing from extending.
    if (this.#budget !== undefined && this.#validUntil >= this.#budget.deadline) return;
    this.#extendTimer = setTimeout(() => void this.#autoExtendNow(), Math.max(0, delay));
    unref(this.#extendTimer);
  }

  async #autoExtendNow(): Promise<void> {
    if (this.#state !== "held" || this.#extending !== undefined) return;
    try {
      await this.extend();
    } catch (error) {
      if (this.#state !== "held") return;
      const name = (error as Error).name;
      if (name === "BudgetExhaustedError") return; // the abort timer ends the lock in time
      // Nodes unavailable: try again while validity remains; the abort timer fires if all fail.
      const left = this.#validUntil - this.#lead - performance.now();
      if (left > 0) this.#scheduleExtension(Math.max(1, left / 3));
    }
  }

  #lose(reason: "lost" | "validity" | "deadline", error: LockLostError): void {
    // Released, handed on or completed: the signal already aborted then (#end), and the lock is
    // no longer this handle's to lose — no state change, no event.
    if (this.#state !== "held") return;
    this.#state = "lost";
    this.#lostError = error;
    if (this.#abortTimer !== undefined) clearTimeout(this.#abortTimer);
    if (this.#extendTimer !== undefined) clearTimeout(this.#extendTimer);
    this.#controller?.abort(error);
    this.#grant.local.end();
    this.#core.emit({ type: "lost", key: this.key, reason, outcomes: error.outcomes });
  }

  /**
   * The holder ended the lock: abort `signal` with a {@link LockEndedError} saying how (unless a
   * loss aborted it first; a signal aborts once). Called only after the state left `held` and the
   * release, completion or hand-off is under way, so an abort listener (user code, run
   * synchronously) that calls `release()`, `extend()` or `ticket()` meets the ended lock and
   * cannot change what this handle sends (docs/SAFETY.md §6c, S1).
   */
  #end(how: LockEnd): void {
    if (this.#lostError !== undefined || this.#ended !== undefined) return;
    this.#ended = new LockEndedError(this.key, how);
    this.#controller?.abort(this.#ended);
  }

  async extend(lease?: number): Promise<ExtendResult> {
    if (lease !== undefined && !(Number.isSafeInteger(lease) && lease > 0 && lease <= MAX_LEASE)) {
      throw new ConfigurationError("lease", `expected a positive integer (ms), got ${lease}`);
    }
    while (this.#extending !== undefined) await this.#extending.catch(() => {});
    const pending = this.#extendOnce(lease ?? this.#grant.lease, true);
    this.#extending = pending;
    try {
      return await pending;
    } finally {
      if (this.#extending === pending) this.#extending = undefined;
    }
  }

  /** One extension round; `capped`: the TTL is sized by the budget (not for a hand-off). */
  async #extendOnce(lease: number, capped: boolean): Promise<ExtendResult> {
    if (this.#state === "released") throw new LockLostError(this.key, "it was released");
    if (this.#state === "lost") throw this.#lostError as LockLostError;
    if (this.#state === "handed") throw new LockLostError(this.key, "it was handed on as a ticket");
    if (performance.now() >= this.#validUntil) {
      const error = new LockLostError(this.key, "its validity ended before the extension");
      this.#lose("validity", error);
      throw error;
    }
    const core = this.#core;
    const n = core.nodes.length;
    const budget = this.#budget;
    const ttl = budget === undefined || !capped ? lease : budget.ttl(lease);
    // Extending needs only time left (not the reserve), N requests, and N more for the release.
    const shortfall =
      budget === undefined
        ? undefined
        : budgetShortfall(core, budget, { ttl, requests: 2 * n, reserve: 0 });
    if (shortfall !== undefined) throw shortfall;
    const { keys, token, holds } = this.#grant;
    const timeoutMs = core.timeoutFor(ttl);
    const round = await core.extendRound({ keys, token, ttl, timeoutMs, budget }, holds);
    const durationMs = performance.now() - round.startedAt;
    const { outcomes } = round;
    if (round.ok && validity(ttl, durationMs, core.options.driftFactor) > 0) {
      core.emit({ type: "extend", key: this.key, result: "extended", durationMs, outcomes });
      // The signal aborted while this round ran: the lock stays lost (a signal never un-aborts).
      const now = this.#state as State; // may have changed while the round ran
      if (now === "lost") throw this.#lostError as LockLostError;
      if (now === "held") {
        // Never earlier than before: no node shortens our expiry (EXTEND only raises it), so the
        // old end still holds when this extension asked for less (docs/SAFETY.md, E1).
        const extended = round.startedAt + ttl - drift(ttl, core.options.driftFactor);
        this.#setValidity(Math.max(this.#validUntil, extended));
      }
      return { validUntil: this.#validUntilEpoch, outcomes };
    }
    const gone = outcomes.filter((o) => o.status === "absent" || o.status === "held").length;
    if (gone > n - core.quorum) this.#gone = true;
    if (round.ok || gone > n - core.quorum) {
      core.emit({ type: "extend", key: this.key, result: "lost", durationMs, outcomes });
      const lostOn = outcomes
        .filter((o) => o.status === "absent" || o.status === "held")
        .map((o) => `${nodeName(o)}: ${o.status === "absent" ? "our token is gone" : reasonOf(o)}`)
        .join("; ");
      const error = new LockLostError(
        this.key,
        round.ok
          ? "the extension took longer than its TTL"
          : `expired or taken over on ${gone} of ${n} nodes (${lostOn})`,
        { outcomes },
      );
      this.#lose("lost", error);
      throw error;
    }
    core.emit({ type: "extend", key: this.key, result: "unavailable", durationMs, outcomes });
    const failed = outcomes.filter((o) => o.status === "timeout" || o.status === "error").length;
    const fix = configurationFault(outcomes);
    const why = `extension failed: ${failed} of ${n} nodes failed: ${describeNodes(outcomes)}`;
    throw new QuorumError(this.key, fix === undefined ? why : `${fix}. ${why}`, { outcomes });
  }

  async ticket(options?: { readonly lease?: number | undefined }): Promise<LockTicket> {
    if (this.#owed !== undefined) {
      // The wrapper writes the done marker with this holder's token when its function returns; a
      // resumed lock holds another token, so neither could complete it. Nothing is sent.
      const { wrapper } = this.#owed;
      throw new ConfigurationError(
        "ticket",
        `a lock held by ${wrapper} cannot be handed on: ${wrapper} records the run (its done ` +
          "marker) with this holder's token when the function returns, so a resumed lock could " +
          "not be completed. This lock is unchanged (still yours); take a lock of its own for " +
          "work that continues elsewhere",
      );
    }
    const lease = options?.lease;
    if (lease !== undefined && !(Number.isSafeInteger(lease) && lease > 0 && lease <= MAX_LEASE)) {
      throw new ConfigurationError("lease", `expected a positive integer (ms), got ${lease}`);
    }
    this.#ticketing ??= this.#ticketOnce(lease ?? this.#grant.lease);
    return this.#ticketing;
  }

  async #ticketOnce(lease: number): Promise<LockTicket> {
    try {
      // Outlive this invocation: the full lease, not capped by the budget (that is the point).
      while (this.#extending !== undefined) await this.#extending.catch(() => {});
      const pending = this.#extendOnce(lease, false);
      this.#extending = pending;
      try {
        await pending;
      } finally {
        if (this.#extending === pending) this.#extending = undefined;
      }
    } catch (error) {
      this.#ticketing = undefined; // still ours unless lost: the caller may release or retry
      throw error;
    }
    // Released or lost while the extension ran: there is nothing to hand on.
    const state = this.#state as State;
    if (state === "lost") throw this.#lostError as LockLostError;
    if (state !== "held") throw new LockLostError(this.key, "it was released while handing on");
    const core = this.#core;
    const { token, fence } = this.#grant;
    const ticket: LockTicket = {
      v: 1,
      key: this.keys.length === 1 ? this.key : this.keys,
      prefix: core.options.prefix,
      token,
      fence: fence ?? null,
      lease,
      nodes: core.nodes.map((node) => node.host),
      validUntil: this.#validUntilEpoch,
    };
    // From here the resumer owns it: no more extensions from this handle, and its waiters here
    // may look (they find the key held until the resumer releases it).
    this.#state = "handed";
    if (this.#extendTimer !== undefined) clearTimeout(this.#extendTimer);
    this.#grant.local.end();
    this.#end("handed-on");
    return ticket;
  }

  release(): Promise<ReleaseResult> {
    // Handed on: the resumer holds it now (with a token of its own): nothing to send.
    if (this.#state === "handed") return Promise.resolve({ status: "handed-on", outcomes: [] });
    // After completion the key holds the done marker, which a release must not (and could not,
    // RELEASE compares tokens) delete: report the completion instead of sending N requests.
    this.#releasing ??=
      this.#completing === undefined
        ? this.#releaseOnce()
        : this.#completing.then(({ recorded, outcomes }) => ({
            status: recorded ? "released" : "unknown",
            outcomes,
          }));
    // After #releasing is set (a listener's own release() gets this one) and the handle is
    // marked released (#releaseOnce does it before its first await).
    this.#end("released");
    return this.#releasing;
  }

  /**
   * `await using`: {@link release}, whose result nobody reads here. Never rejects (a scope's own
   * error must not be masked); after a release, a hand-off or a completion it sends nothing
   * (`release()` is idempotent and reports those).
   */
  async [asyncDispose](): Promise<void> {
    await this.release().catch(() => undefined);
  }

  /** See {@link complete}. */
  async #completeOnce(
    retention: number,
    record: string | undefined,
    persist: boolean,
  ): Promise<CompleteResult> {
    // Released by the job itself: COMPLETE still records it (the key is absent, or taken over and
    // then left alone), after that release round so the two never interleave. Read before any
    // await: a release() called from now on reports this completion (and waits for it).
    const releasing = this.#releasing;
    this.#state = "released";
    if (this.#abortTimer !== undefined) clearTimeout(this.#abortTimer);
    if (this.#extendTimer !== undefined) clearTimeout(this.#extendTimer);
    while (this.#extending !== undefined) await this.#extending.catch(() => {});
    if (releasing !== undefined) await releasing;
    const { keys, token, timeoutMs } = this.#grant;
    const core = this.#core;
    const spec = { keys, token, timeoutMs, budget: this.#budget };
    let round = await core.completeRound(spec, retention, record);
    // persist (idempotency, SAFETY.md §6b I1): re-send until a majority holds the marker, while
    // our token still holds the key on a majority (before the validity end), so that the claim
    // is never given up before the record is on a majority. A re-send finding the marker leaves
    // the first record (COMPLETE), so only the nodes that missed it change.
    for (let pause = core.options.retryDelay; persist && !round.ok; ) {
      // Another holder on more than N − Q nodes: no re-send can reach a majority.
      const taken = round.outcomes.filter((o) => o.status === "held").length;
      if (taken > core.nodes.length - core.quorum) break;
      const left = this.#validUntil - performance.now() - timeoutMs;
      if (left <= 0 || !this.#canResend(timeoutMs)) break;
      await sleep(Math.min(left, pause * (0.5 + random() / 2)));
      if (this.#validUntil - performance.now() - timeoutMs <= 0) break;
      pause = Math.min(2 * pause, core.options.retryDelayMax);
      round = await core.completeRound(spec, retention, record);
    }
    // A caller of this instance waiting for the key now finds the marker on a majority.
    this.#grant.local.end();
    const { outcomes } = round;
    const durationMs = performance.now() - round.startedAt;
    const result = round.ok ? "recorded" : "unrecorded";
    core.emit({ type: "complete", key: this.key, result, durationMs, outcomes });
    return { recorded: round.ok, outcomes };
  }

  /** Whether the budget (if any) leaves time and node requests for one more round. */
  #canResend(timeoutMs: number): boolean {
    const budget = this.#budget;
    if (budget === undefined) return true;
    return (
      budget.remaining() > timeoutMs && budget.remainingSubrequests() >= this.#core.nodes.length
    );
  }

  async #releaseOnce(): Promise<ReleaseResult> {
    const held = this.#state === "held";
    this.#state = "released";
    if (this.#abortTimer !== undefined) clearTimeout(this.#abortTimer);
    if (this.#extendTimer !== undefined) clearTimeout(this.#extendTimer);
    while (this.#extending !== undefined) await this.#extending.catch(() => {});
    // Still held and valid as the requests go out: our token is on a majority until then
    // (docs/SAFETY.md, E3), so a release that a majority answered did release it, whatever a
    // re-sent request then found there (gone, or a reservation already taken by the waiter it
    // woke). Not after an extension found it gone (its keys were deleted behind our back).
    const valid = held && !this.#gone && performance.now() < this.#validUntil;
    const { keys, token, timeoutMs, holds } = this.#grant;
    const core = this.#core;
    // The first caller of this instance waiting for the key stands ready: hand the key over in
    // the same requests. Otherwise it asks on its own once woken (on each node after our release
    // there answered).
    const line = core.lines.peek(core.lineKey(keys));
    const offer = line?.takeOffer();
    const next = offer?.next();
    let releasing: Promise<Round<CasReply>>;
    if (offer !== undefined && next !== undefined) {
      const handover = handoverRound(core, { keys, token, holds, budget: this.#budget }, next);
      offer.accept(handover.acquire);
      // Resolve once the next holder's round is decided too: on Workers, what this request
      // started stops when it ends, and the next holder (another request) waits on it.
      releasing = Promise.all([handover.release, handover.acquire]).then(([round]) => round);
    } else {
      // Waiters of other instances placed before our next caller are served first (the room).
      const scope = {
        holds,
        serveRoom: true,
        before: line?.firstPlace(),
        // A one-shot run's counter lives on for its retry, then expires (docs/SAFETY.md §5).
        counterMs: this.#owed?.retention,
      };
      releasing = core.releaseRound({ keys, token, timeoutMs, budget: this.#budget }, scope);
    }
    this.#grant.local.end();
    this.#releaseSettled = releasing.then((r) => r.settled);
    const round = await releasing;
    const { outcomes } = round;
    const status = !round.ok
      ? "unknown"
      : valid || outcomes.some((o) => o.status === "ok")
        ? "released"
        : "expired";
    const durationMs = performance.now() - round.startedAt;
    core.emit({ type: "release", key: this.key, result: status, durationMs, outcomes });
    return { status, outcomes };
  }
}

/**
 * Release `lock` and resolve only once every node answered the release or timed out (each
 * request is bounded by the request timeout), not as soon as a majority did like
 * `lock.release()`. For runtimes that freeze or end the invocation when the handler returns
 * (Lambda, a Worker's `waitUntil`): a request still in flight then would leave the key on that
 * node until its TTL ran out. A lock not from `createLocks` is only released.
 *
 * @example
 * try { return await work(lock); } finally { await releaseSettled(lock); }
 */
export async function releaseSettled(lock: Lock): Promise<ReleaseResult> {
  const result = await lock.release();
  if (lock instanceof LockHandle) await releaseSettledOf(lock);
  return result;
}

/**
 * Mark `lock` as held by a wrapper that ends it with {@link complete} (`once()`, `dedupeScheduled`,
 * an Idempotency-Key request): from now on `lock.ticket()` rejects with `ConfigurationError`
 * `ticket` naming `wrapper` (the lock stays held), and a release gives the key's fence counter an
 * expiry of at least `retention` ms (docs/SAFETY.md §5, one-shot keys). A lock not from
 * `createLocks` is left alone. Internal to the wrappers.
 *
 * @example
 * owesCompletion(lock, "once()", 86_400_000);
 */
export function owesCompletion(lock: Lock, wrapper: string, retention: number): void {
  if (lock instanceof LockHandle) markOwed(lock, { wrapper, retention });
}

/** Whether {@link complete} can finish `lock` (it came from `createLocks`). */
export const isCompletable = (lock: Lock): boolean => lock instanceof LockHandle;

/**
 * End a lock by turning it into a done marker kept `retention` ms (the COMPLETE round, one request
 * per node) instead of releasing it: stops auto-extension and awaits an in-flight extension first,
 * like `release()`. Idempotent; a later `release()` reports this completion. Never throws for node
 * failures: `recorded` is false when fewer than a majority hold the marker. `record` (printable
 * ASCII) is kept in the marker for `recordRound` to read (the idempotency layer's response).
 * Internal to `once()` and idempotency: not part of the `Lock` interface.
 *
 * @throws {ConfigurationError} `lock` did not come from `createLocks`
 * @example
 * const { recorded } = await complete(lock, 86_400_000);
 */
export function complete(lock: Lock, retention: number, record?: string): Promise<CompleteResult> {
  if (!(lock instanceof LockHandle)) {
    throw new ConfigurationError("lock", "expected a lock acquired through createLocks()");
  }
  return completeHandle(lock, retention, record);
}

/**
 * {@link complete}, re-sending COMPLETE (with backoff from `retryDelay` to `retryDelayMax`) until
 * a majority holds the marker, for as long as the lock is still valid (its token is on a
 * majority: docs/SAFETY.md E2) with a request timeout to spare, and the budget allows another
 * round. The idempotency layer's record write: the claim is never given up before its record
 * is on a majority, unless that time runs out (then `recorded` is false and the token stays
 * where COMPLETE did not run, until its TTL).
 *
 * @throws {ConfigurationError} `lock` did not come from `createLocks`
 * @example
 * const { recorded } = await completePersistently(lock, 86_400_000, record);
 */
export function completePersistently(
  lock: Lock,
  retention: number,
  record?: string,
): Promise<CompleteResult> {
  if (!(lock instanceof LockHandle)) {
    throw new ConfigurationError("lock", "expected a lock acquired through createLocks()");
  }
  return completeHandle(lock, retention, record, true);
}
