import type { Budget } from "../budget";
import {
  ConfigurationError,
  checkKnown,
  describeNodes,
  isFailed,
  isGone,
  type LockEnd,
  LockEndedError,
  type LockErrorOptions,
  LockLostError,
  type NodeOutcome,
  QuorumError,
  withFix,
} from "../errors";
import type { Round } from "../quorum";
import { drift, validity } from "../quorum";
import type { CasReply, CompleteReply } from "../scripts";
import { completeRounds, type Ending } from "./complete";
import type { LockCore } from "./core";
import { budgetShortfall } from "./failure";
import type { Grant } from "./grant";

import { Life, type Phase } from "./life";
import { checkLease, checkReach } from "./options";
import { unref } from "./timing";
import type { ExtendResult, Lock, LockTicket, ReleaseOptions, ReleaseResult } from "./types";
import { handoverRound } from "./wait/handover";

/**
 * The key of the handle's `await using` disposer. Node ≥ 20.5, workerd, Bun and Deno define
 * `Symbol.asyncDispose`; where it is missing, the registered symbol esbuild's and TypeScript's
 * usual polyfills use, without patching the global (a library must not).
 */
const asyncDispose: typeof Symbol.asyncDispose =
  // biome-ignore lint/suspicious/noExplicitAny: the symbol may be missing at runtime
  (Symbol as any).asyncDispose ?? Symbol.for("Symbol.asyncDispose");

/**
 * The handle's door for the wrappers that end a lock with a done marker (`once()`, scheduled
 * dedupe, the Idempotency-Key layer). Beyond the {@link Lock} interface, other rooms reach a
 * handle only through the functions at the end of this file — {@link complete},
 * {@link completePersistently}, {@link owesCompletion}, {@link isCompletable} — which call the two
 * methods keyed by these symbols. The symbols stay in this module, so nothing else can.
 */
const completeDoor = Symbol("complete");
const oweDoor = Symbol("owe completion");

/**
 * Result of {@link complete}: `recorded` when a majority of nodes hold the done marker (written
 * now or already there).
 */
export interface CompleteResult {
  readonly recorded: boolean;
  readonly outcomes: readonly NodeOutcome[];
}

/**
 * A wrapper that ends the lock with {@link complete}: the error `ticket()` rejects with (built by
 * {@link owesCompletion}, so its words are bundled only with the wrappers), and its marker's
 * retention (ms).
 */
interface Owed {
  readonly refusal: () => ConfigurationError;
  readonly retention: number;
}

const ignore = (): void => undefined;

/**
 * A held lock (see {@link Lock}). Keeps its validity end on the monotonic clock, arms a timer that
 * aborts `signal` shortly before the validity or the budget's deadline ends, and, with
 * `autoExtend`, extends itself after a third to a half of the validity (early enough that a
 * timed-out attempt can be retried before the abort).
 *
 * Its life is the state machine of `life.ts`: `held`, then one of `lost`, `released`,
 * `completed`, `handed`, each step taken by one method below (`#lose`, `#releaseOnce`,
 * `#completeOnce`, `#ticketOnce`) and checked against the table there.
 */
export class LockHandle implements Lock {
  declare readonly key: string;
  declare readonly keys: readonly string[];
  declare readonly token: string;
  declare readonly fence: number | undefined;
  readonly #core: LockCore;
  readonly #grant: Grant;
  readonly #budget: Budget | undefined;
  readonly #autoExtend: boolean;
  /** Where this handle is in its life; every change goes through `#life.take()`. */
  readonly #life = new Life();
  /** Created on first use of `signal` (most locks are released without anyone reading it). */
  #controller: AbortController | undefined;
  /**
   * Why the protection ended, set once by the first end: the loss that moved the handle to `lost`
   * (what operations then throw), or how the holder ended it (release, ticket, completion). The
   * signal's reason. An end's error is built only when someone reads it (`#reason`): most locks
   * are released without anyone reading `signal`, and an error's stack trace is the dearest
   * object of a release.
   */
  #why: LockLostError | LockEndedError | undefined;
  #ended: LockEnd | undefined;
  #validUntil = 0;
  #validUntilEpoch = 0;
  #lead = 0;
  #abortTimer: ReturnType<typeof setTimeout> | undefined;
  #extendTimer: ReturnType<typeof setTimeout> | undefined;
  /** The extension in flight: one at a time, and every ending step waits behind it. */
  #extending: Promise<ExtendResult> | undefined;
  // The ending steps, each taken once: a second call returns the first call's promise.
  #releasing: Promise<ReleaseResult> | undefined;
  #completing: Promise<CompleteResult> | undefined;
  /** Cleared when handing on failed while the lock stayed ours (the caller may retry). */
  #ticketing: Promise<LockTicket> | undefined;
  /** Every node's answer (or timeout) to the requests that ended the lock, once they were sent. */
  #settled: Promise<unknown> = Promise.resolve();
  /** An extension found our token gone or taken over on a majority. */
  #gone = false;
  /** Held by a wrapper that completes it (see {@link owesCompletion}). */
  #owed: Owed | undefined;

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
    // Handed over by a release (the queue): it lasts the hand-off TTL. Without auto-extension it
    // still extends once to its lease, halfway through (a short section released before that
    // costs no extension).
    if (grant.short === true && !autoExtend) {
      this.#scheduleExtension((grant.validUntil - performance.now()) / 2);
    }
  }

  get validUntil(): number {
    return this.#validUntilEpoch;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      // Lost or ended before anyone asked: hand out an aborted signal with the same reason.
      const why = this.#reason();
      if (why !== undefined) this.#controller.abort(why);
    }
    return this.#controller.signal;
  }

  /**
   * Record a new validity end; re-arm the abort timer and the next auto-extension (docs/SAFETY.md
   * §3, "validity": V = s + T − drift(T), the abort one request timeout, at most V/4, before it).
   */
  #setValidity(validUntil: number): void {
    const now = performance.now();
    const span = validUntil - now;
    this.#validUntil = validUntil;
    // Whole epoch ms, rounded down: never later than the monotonic end it stands for.
    this.#validUntilEpoch = Math.floor(Date.now() + span);
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
        this.#lose(reason, new LockLostError(this.key, message, this.#named()));
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
    if (this.#life.now() !== "held") return;
    // A lock that already lasts past the budget's deadline gains nothing from extending.
    if (this.#budget !== undefined && this.#validUntil >= this.#budget.deadline) return;
    this.#extendTimer = setTimeout(() => void this.#autoExtendNow(), Math.max(0, delay));
    unref(this.#extendTimer);
  }

  async #autoExtendNow(): Promise<void> {
    if (this.#life.now() !== "held" || this.#extending !== undefined) return;
    try {
      await this.extend();
    } catch (error) {
      if (this.#life.now() !== "held") return;
      const name = (error as Error).name;
      if (name === "BudgetExhaustedError") return; // the abort timer ends the lock in time
      // Nodes unavailable: try again while validity remains; the abort timer fires if all fail.
      const left = this.#validUntil - this.#lead - performance.now();
      if (left > 0) this.#scheduleExtension(Math.max(1, left / 3));
    }
  }

  /** Stop the abort timer and auto-extension: the interval ended (or was lost). */
  #stopTimers(): void {
    if (this.#abortTimer !== undefined) clearTimeout(this.#abortTimer);
    if (this.#extendTimer !== undefined) clearTimeout(this.#extendTimer);
  }

  /** Step `lose` (held → lost): the lock is no longer protected; abort `signal` with `error`. */
  #lose(reason: "lost" | "validity" | "deadline", error: LockLostError): void {
    // Released, handed on or completed: the signal already aborted then (#end), and the lock is
    // no longer this handle's to lose — no step, no event.
    if (this.#life.now() !== "held") return;
    this.#life.take("lose");
    this.#why = error;
    this.#stopTimers();
    this.#controller?.abort(error);
    this.#grant.local.end();
    this.#core.emit({ type: "lost", key: this.key, reason, outcomes: error.outcomes });
  }

  /**
   * The holder ended the lock: abort `signal` with a {@link LockEndedError} saying how (unless a
   * loss aborted it first; a signal aborts once). Called only after the handle left `held` and the
   * release, completion or hand-off is recorded, so an abort listener (user code, run
   * synchronously) that calls `release()`, `extend()` or `ticket()` meets the ended lock and
   * cannot change what this handle sends (docs/SAFETY.md §6c, S1).
   */
  #end(how: LockEnd): void {
    if (this.#why !== undefined || this.#ended !== undefined) return;
    this.#ended = how;
    if (this.#controller !== undefined) this.#controller.abort(this.#reason());
  }

  /** The signal's reason (see `#why`), the end's error built on first use. */
  #reason(): LockLostError | LockEndedError | undefined {
    if (this.#why === undefined && this.#ended !== undefined) {
      this.#why = new LockEndedError(this.key, this.#ended, this.#named());
    }
    return this.#why;
  }

  /** Options of this handle's errors: they name a permit's semaphore as such (`subject`). */
  #named(outcomes: readonly NodeOutcome[] = []): LockErrorOptions {
    return { outcomes, subject: this.#grant.subject };
  }

  /** Why an operation that needs the lock held cannot run in `phase` (not `held`). */
  #notHeld(phase: Phase): LockLostError {
    if (phase === "lost" && this.#why instanceof LockLostError) return this.#why;
    if (phase === "handed") return new LockLostError(this.key, "it was handed on as a ticket");
    return new LockLostError(this.key, "it was released", this.#named());
  }

  /**
   * Wait behind the extension in flight until none is (one that queued behind it may run next),
   * whether it succeeded or not. Callers call it only while one is in flight, so that with none a
   * step goes on within the call: a release's requests go out (and are recorded for this
   * instance's next acquire) before `release()` returns.
   */
  async #afterExtension(): Promise<void> {
    while (this.#extending !== undefined) await this.#extending.catch(ignore);
  }

  /**
   * Run one extension round behind the one in flight (one at a time: each starts from the
   * validity the previous one left), and record it so that the ending steps wait behind it.
   */
  async #extendInTurn(lease: number, capped: boolean): Promise<ExtendResult> {
    if (this.#extending !== undefined) await this.#afterExtension();
    const pending = this.#extendOnce(lease, capped);
    this.#extending = pending;
    try {
      return await pending;
    } finally {
      if (this.#extending === pending) this.#extending = undefined;
    }
  }

  extend(lease?: number): Promise<ExtendResult> {
    try {
      // The rule acquire() applies up front: a lease no grant could turn into minValidity would
      // come back "not valid" from nodes that all still hold the key, and lose the lock for it.
      const { driftFactor, minValidity } = this.#core.options;
      const checked =
        lease === undefined ? undefined : checkReach(checkLease(lease), driftFactor, minValidity);
      return this.#extendInTurn(checked ?? this.#grant.lease, true);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * One extension round (docs/SAFETY.md §3, "extend"); `capped`: the TTL is sized by the budget
   * (not for a hand-off). A majority that no longer holds our token takes the step `lose`.
   */
  async #extendOnce(lease: number, capped: boolean): Promise<ExtendResult> {
    const phase = this.#life.now();
    if (phase !== "held") throw this.#notHeld(phase);
    if (performance.now() >= this.#validUntil) {
      const error = new LockLostError(
        this.key,
        "its validity ended before the extension",
        this.#named(),
      );
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
    try {
      const durationMs = performance.now() - round.startedAt;
      const { outcomes } = round;
      if (round.ok && validity(ttl, durationMs, core.options.driftFactor) > 0) {
        core.emit({ type: "extend", key: this.key, result: "extended", durationMs, outcomes });
        // The phase may have moved while the round ran. Lost: the lock stays lost (a signal never
        // un-aborts). Ended by the holder: the new validity no longer matters.
        const now = this.#life.now();
        if (now === "lost") throw this.#notHeld(now);
        if (now === "held") {
          // Never earlier than before: no node shortens our expiry (EXTEND only raises it), so the
          // old end still holds when this extension asked for less (docs/SAFETY.md §2, E1; §3 E3).
          const extended = round.startedAt + ttl - drift(ttl, core.options.driftFactor);
          this.#setValidity(Math.max(this.#validUntil, extended));
        }
        return { validUntil: this.#validUntilEpoch, outcomes };
      }
      const gone = outcomes.filter(isGone).length;
      if (gone > n - core.quorum) this.#gone = true;
      if (round.ok || gone > n - core.quorum) {
        core.emit({ type: "extend", key: this.key, result: "lost", durationMs, outcomes });
        const lostOn = describeNodes(outcomes, isGone, "our token is gone");
        const error = new LockLostError(
          this.key,
          round.ok
            ? "the extension took longer than its TTL"
            : `expired or taken over on ${gone} of ${n} nodes (${lostOn})`,
          this.#named(outcomes),
        );
        this.#lose("lost", error);
        throw error;
      }
      core.emit({ type: "extend", key: this.key, result: "unavailable", durationMs, outcomes });
      const failed = outcomes.filter(isFailed).length;
      const why = `extension failed: ${failed} of ${n} nodes failed: ${describeNodes(outcomes)}`;
      throw new QuorumError(this.key, withFix(outcomes, why), this.#named(outcomes));
    } finally {
      // Lost while the round ran (the abort timer) or by its outcome: wherever EXTEND ran, the
      // nodes now keep t for T′ although nobody holds it (docs/SAFETY.md §3, "extend, lost").
      if (this.#life.now() === "lost" && !round.outcomes.every(isGone)) this.#dropAtValidityEnd();
    }
  }

  /**
   * After a loss that an extension round outlived, remove our token at V: a RELEASE to every node
   * (it removes t only where t still is, L1), serving the queue as a release does, so that a
   * waiter does not wait out a TTL that nobody holds. Not before V: the signal aborted one
   * request timeout early so that work in flight lands inside the interval, and without the
   * extension a majority kept t until V anyway (E2). Not a step: the handle stays `lost`; a
   * `release()` or completion before then sends its own round instead. A round that fails, or an
   * invocation that ends before V, leaves the token to its TTL (which a budget capped).
   */
  #dropAtValidityEnd(): void {
    const drop = async (): Promise<void> => {
      if (this.#life.now() !== "lost") return;
      const core = this.#core;
      await this.#releaseRound(core.lines.peek(core.lineKey(this.#grant.keys))?.firstPlace());
    };
    unref(setTimeout(() => void drop().catch(ignore), this.#validUntil - performance.now()));
  }

  /**
   * This grant's release round without a hand-over: its own (a permit's), or RELEASE with the
   * scope the grant needs — waiters placed before `before` served first, a one-shot run's
   * counter lifetime, a queued grant's or an unheard request's tombstone (docs/SAFETY.md L3).
   */
  #releaseRound(before: number | undefined): Promise<Round<CasReply>> {
    const { keys, token, timeoutMs, holds, closes, unheard, release } = this.#grant;
    const spec = { keys, token, timeoutMs, budget: this.#budget };
    if (release !== undefined) return release(spec);
    const scope = { holds, before, counterMs: this.#owed?.retention, keepMs: closes, unheard };
    return this.#core.releaseRound(spec, scope);
  }

  async ticket(options?: { readonly lease?: number | undefined }): Promise<LockTicket> {
    if (this.#owed !== undefined) {
      // The wrapper writes the done marker with this holder's token when its function returns; a
      // resumed lock holds another token, so neither could complete it (docs/SAFETY.md §6d, O3).
      // Nothing is sent.
      throw this.#owed.refusal();
    }
    // Handing on cannot be undone: a typo (`leaes`) or a bare number must not hand the lock on
    // with the default lease. Refused before any step: the lock is as it was.
    const lease = ticketLease(options);
    this.#ticketing ??= this.#ticketOnce(lease ?? this.#grant.lease);
    return this.#ticketing;
  }

  /**
   * Step `hand-on` (held → handed; docs/SAFETY.md §3, "ticket"): the extend step to the ticket's
   * lease, then, if still held, the ticket.
   */
  async #ticketOnce(lease: number): Promise<LockTicket> {
    try {
      // Outlive this invocation: the full lease, not capped by the budget (that is the point).
      await this.#extendInTurn(lease, false);
    } catch (error) {
      this.#ticketing = undefined; // still ours unless lost: the caller may release or retry
      throw error;
    }
    // Released or lost while the extension ran: there is nothing to hand on.
    const now = this.#life.now();
    if (now === "lost") throw this.#notHeld(now);
    if (now !== "held") throw new LockLostError(this.key, "it was released while handing on");
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
    // may look (they find the key held until the resumer releases it). The abort timer is left
    // to run out: it finds the handle no longer held and does nothing.
    this.#life.take("hand-on");
    if (this.#extendTimer !== undefined) clearTimeout(this.#extendTimer);
    this.#grant.local.end();
    this.#end("handed-on");
    return ticket;
  }

  /**
   * Release (see {@link Lock.release}); with `settled`, resolve once every node answered the
   * requests that ended the lock (or timed out), not at the majority that decides the result.
   */
  release(options?: ReleaseOptions): Promise<ReleaseResult> {
    if (options === undefined) return this.#release();
    let settled: boolean;
    try {
      settled = settledOption(options);
    } catch (error) {
      return Promise.reject(error); // before any step: the lock is as it was
    }
    return settled ? this.#releaseSettled() : this.#release();
  }

  #release(): Promise<ReleaseResult> {
    // Handed on: the resumer holds it now (with a token of its own): nothing to send.
    if (this.#life.now() === "handed") {
      return Promise.resolve({ status: "handed-on", outcomes: [] });
    }
    // After completion the key holds the done marker, which a release must not (and could not,
    // RELEASE compares tokens) delete: report the completion instead of sending N requests.
    this.#releasing ??=
      this.#completing === undefined
        ? this.#releaseOnce()
        : this.#completing.then(({ recorded, outcomes }) => ({
            status: recorded ? "released" : "unknown",
            outcomes,
          }));
    // After #releasing is set (a listener's own release() gets this one) and the handle took the
    // step `release` (#releaseOnce does it before its first await).
    this.#end("released");
    return this.#releasing;
  }

  /** The release, then every node's answer to what ended the lock (each bounded by its timeout). */
  async #releaseSettled(): Promise<ReleaseResult> {
    const result = await this.#release();
    await this.#settled;
    return result;
  }

  /**
   * `await using`: {@link release}, whose result nobody reads here. Never rejects (a scope's own
   * error must not be masked); after a release, a hand-off or a completion it sends nothing
   * (`release()` is idempotent and reports those).
   */
  async [asyncDispose](): Promise<void> {
    await this.release().catch(() => undefined);
  }

  /** The door of {@link complete}: one completion, whoever asks again. */
  [completeDoor](
    rounds: (ending: Ending) => Promise<Round<CompleteReply>>,
  ): Promise<CompleteResult> {
    this.#completing ??= this.#completeOnce(rounds);
    this.#end("completed");
    return this.#completing;
  }

  /** The door of {@link owesCompletion}. */
  [oweDoor](owed: Owed): void {
    this.#owed = owed;
  }

  /**
   * Step `complete` (held, lost or released → completed; docs/SAFETY.md §3, "complete"): the
   * interval ends before COMPLETE is sent (by `rounds`, `complete.ts`). See {@link complete}.
   */
  async #completeOnce(
    rounds: (ending: Ending) => Promise<Round<CompleteReply>>,
  ): Promise<CompleteResult> {
    // Released by the job itself: COMPLETE still records it (the key is absent, or taken over and
    // then left alone), after that release round so the two never interleave. Read before any
    // await: a release() called from now on reports this completion (and waits for it).
    const releasing = this.#releasing;
    this.#life.take("complete");
    this.#stopTimers();
    if (this.#extending !== undefined) await this.#afterExtension();
    if (releasing !== undefined) await releasing;
    const { keys, token, timeoutMs } = this.#grant;
    const core = this.#core;
    const round = await rounds({
      core,
      spec: { keys, token, timeoutMs, budget: this.#budget },
      validUntil: this.#validUntil,
      settle: (r) => {
        this.#settled = Promise.all([this.#settled, r.settled]);
      },
    });
    // A caller of this instance waiting for the key now finds the marker on a majority.
    this.#grant.local.end();
    const { outcomes } = round;
    const durationMs = performance.now() - round.startedAt;
    const result = round.ok ? "recorded" : "unrecorded";
    core.emit({ type: "complete", key: this.key, result, durationMs, outcomes });
    return { recorded: round.ok, outcomes };
  }

  /**
   * Step `release` (held or lost → released; docs/SAFETY.md §3, "release"): the interval ends
   * here, before any request; then the release (or a hand-over to this instance's next caller).
   */
  async #releaseOnce(): Promise<ReleaseResult> {
    const held = this.#life.now() === "held";
    this.#life.take("release");
    this.#stopTimers();
    if (this.#extending !== undefined) await this.#afterExtension();
    // Still held and valid as the requests go out: our token is on a majority until then
    // (docs/SAFETY.md §3, E3), so a release that a majority answered did release it, whatever a
    // re-sent request then found there (gone, or the waiter its first request handed the key
    // to). Not after an extension found it gone (its keys were deleted behind our back).
    const valid = held && !this.#gone && performance.now() < this.#validUntil;
    const { keys, token, holds } = this.#grant;
    const core = this.#core;
    // The first caller of this instance waiting for the key stands ready: hand the key over in
    // the same requests. Otherwise it asks on its own once woken (on each node after our release
    // there answered).
    const line = core.lines.peek(core.lineKey(keys));
    // A queued call's grant, or one whose round's request failed somewhere (it may still land),
    // is released to the nodes: its tombstone goes with the release (docs/SAFETY.md §2, L3). A
    // node still pending is not waited for here (the release must start now: our acquires wait
    // for it, `ReleaseOrder`): a hand-over goes to it once its acquire answered (`mayHold`), and
    // only one that then times out gets no tombstone (L3 for grants, "Hand-over").
    const { closes, unheard, release } = this.#grant;
    const late = (unheard?.failed.size ?? 0) > 0;
    const alone = closes === undefined && !late && release === undefined;
    const offer = alone ? line?.takeOffer() : undefined;
    const next = offer?.next();
    let releasing: Promise<Round<CasReply>>;
    if (offer !== undefined && next !== undefined) {
      const handover = handoverRound(core, { keys, token, holds, budget: this.#budget }, next);
      offer.accept(handover.acquire);
      // Resolve once the next holder's round is decided too: on Workers, what this request
      // started stops when it ends, and the next holder (another request) waits on it.
      releasing = Promise.all([handover.release, handover.acquire]).then(([round]) => round);
    } else {
      // Waiters of other instances placed before our next caller are served first (the queue);
      // a one-shot run's counter lives on for its retry, then expires (docs/SAFETY.md §5, J1).
      releasing = this.#releaseRound(line?.firstPlace());
    }
    this.#grant.local.end();
    this.#settled = releasing.then((r) => r.settled);
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

const RELEASE_OPTIONS: ReadonlySet<string> = new Set(["settled"]);

/**
 * `settled` of `lock.release(options)`, validated.
 *
 * @throws {ConfigurationError} `options` not an object, an unknown option, or `settled` not a
 * boolean
 */
function settledOption(options: unknown): boolean {
  checkKnown(options, RELEASE_OPTIONS, "release()");
  const { settled } = options as ReleaseOptions;
  if (settled !== undefined && typeof settled !== "boolean") {
    throw new ConfigurationError("settled", `expected a boolean, got ${typeof settled}`);
  }
  return settled === true;
}

const TICKET_OPTIONS: ReadonlySet<string> = new Set(["lease"]);

/**
 * `lease` of `lock.ticket(options)`, validated (`undefined`: the lock's own lease).
 *
 * @throws {ConfigurationError} `options` not a plain object, an unknown option, or `lease` not a
 * positive integer of ms up to the timer range
 */
function ticketLease(options: unknown): number | undefined {
  if (options === undefined) return undefined;
  checkKnown(options, TICKET_OPTIONS, "ticket()");
  const { lease } = options as { lease?: unknown };
  return lease === undefined ? undefined : checkLease(lease);
}

/**
 * Mark `lock` as held by a wrapper that ends it with {@link complete} (`once()`, `dedupeScheduled`,
 * an Idempotency-Key request): from now on `lock.ticket()` rejects with `ConfigurationError`
 * `ticket` naming `wrapper` (the lock stays held: docs/SAFETY.md §6d, O3), and a release gives the
 * key's fence counter an expiry of at least `retention` ms (docs/SAFETY.md §5, J1). A lock not
 * from `createLocks` is left alone. Internal to the wrappers.
 *
 * @example
 * owesCompletion(lock, "once()", 86_400_000);
 */
export function owesCompletion(lock: Lock, wrapper: string, retention: number): void {
  const refusal = (): ConfigurationError =>
    new ConfigurationError(
      "ticket",
      `a lock held by ${wrapper} cannot be handed on: ${wrapper} records the run (its done ` +
        "marker) with this holder's token when the function returns, so a resumed lock could " +
        "not be completed. This lock is unchanged (still yours); take a lock of its own for " +
        "work that continues elsewhere",
    );
  if (lock instanceof LockHandle) lock[oweDoor]({ refusal, retention });
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
  return lock[completeDoor]((ending) => completeRounds(ending, retention, record, false));
}

/**
 * {@link complete}, re-sending COMPLETE (with backoff from `retryDelay` to `retryDelayMax`) until
 * a majority holds the marker, for as long as the lock is still valid (its token is on a
 * majority: docs/SAFETY.md §3, E2) with a request timeout to spare, and the budget allows another
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
  return lock[completeDoor]((ending) => completeRounds(ending, retention, record, true));
}
