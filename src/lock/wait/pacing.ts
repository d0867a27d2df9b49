import type { Budget } from "../../budget";
import { LockBusyError, type LockError, type NodeOutcome } from "../../errors";
import type { KeyTriple } from "../../scripts";
import type { Keys, LockCore } from "../core";
import { random, sleep } from "../timing";
import { Backoff } from "./backoff";
import type { LineSpot, LocalLine } from "./queue";
import type { Watch } from "./wake";

/**
 * Waiting strategy 3, pacing: when to look again and how (a probe of one node, or every node).
 * Keeps docs/SAFETY.md §6 "Progress" and §6 "Wake-ups are hints only": it decides only when to
 * look, and every look is an ordinary acquire round.
 *
 * @module
 */

/** What a refused look tells {@link Pacing.plan}. */
export interface Refusal {
  readonly outcomes: readonly NodeOutcome[];
  /** The error to report if waiting ends now (the last look that said something). */
  readonly error: LockError;
  /** A probe that failed (no answer): it says nothing about the lock; look again at once. */
  readonly failedProbe: boolean;
  readonly busy: boolean;
}

/**
 * Waiting strategy 3, pacing: how long to sleep after a refused look and how to look next
 * (docs/SAFETY.md §6). Polling: {@link Backoff} (holders' PTTL, full jitter, a turnover-aware cap),
 * and while the lock stays busy each look probes one node (rotating from a random one: one request
 * instead of N; the others are asked once the probe granted). Listening (`wake`): a release wakes
 * us, so look again only at the holders' expiry or after `retryDelayMax` (a lost wake-up), and
 * probe the node the stream is on (keeps the registration fresh where the wake-up comes from).
 * A wake-up, a change in the local line or an expiring holder makes the next look ask every node.
 *
 * Pacing decides only when to look: every look is an ordinary acquire round.
 *
 * @example
 * const pacing = new Pacing(core, keys);
 * const delay = pacing.plan(refusal, waitUntil, budget, roundCost + n);
 * await pacing.pause(line, spot, { delay, signal, member: seat.entry?.member });
 */
export class Pacing {
  /** Node to probe at the next look; `undefined`: ask every node. */
  probeAt: number | undefined;
  #backoff: Backoff | undefined;
  #rotation: number | undefined;
  #watch: Watch | undefined;
  /** The last sleep was a listening one that no wake-up ended (see `Watch.missed`). */
  #dozed = false;
  /** Set by {@link plan} for the sleep that follows. */
  #listening = false;
  #expiring = false;

  constructor(
    private readonly core: LockCore,
    private readonly keys: Keys,
  ) {}

  /**
   * Plan the sleep after a refused look: returns its length (ms) and sets {@link probeAt}. May
   * start listening (`wake`, busy: on the first node that refused, where we just registered).
   */
  plan(refusal: Refusal, waitUntil: number, budget: Budget | undefined, spare: number): number {
    const { options, nodes } = this.core;
    const { error, failedProbe, busy, outcomes } = refusal;
    const now = performance.now();
    const freeIn = error instanceof LockBusyError ? error.retryAfter : undefined;
    this.#backoff ??= new Backoff(options.retryDelay, options.retryDelayMax);
    const backoff = this.#backoff;
    if (!failedProbe) backoff.observe(freeIn, now);
    const listens = this.core.listens(this.keys);
    if (listens && busy && (this.#watch === undefined || this.#watch.failed)) {
      this.#watch?.close();
      this.#watch = this.#listen(outcomes, budget, spare);
    }
    const listening = this.#watch?.ready === true;
    const cap = listening ? options.retryDelayMax : backoff.cap();
    const expiring = freeIn !== undefined && freeIn < cap;
    // A reservation for a woken waiter: it is about to take the key for a lease, so one node will
    // do to see whether it came (if not, the key is free once the reservation ends).
    const handedOn =
      listening &&
      outcomes.some((o) => o.reserved === true) &&
      !outcomes.some((o) => o.status === "held" && o.reserved !== true);
    const budgetLeft = budget === undefined ? Infinity : budget.remaining() - budget.reserve;
    const nap = listening
      ? expiring
        ? Math.max(0, freeIn) + Math.floor(random() * options.retryDelay)
        : cap
      : backoff.next(freeIn);
    const delay = failedProbe ? 0 : Math.min(nap, waitUntil - now, Math.max(0, budgetLeft));
    const stillBusy = error instanceof LockBusyError && !failedProbe && (!expiring || handedOn);
    const n = nodes.length;
    if (n > 1 && stillBusy && listening && this.#watch !== undefined) {
      this.probeAt = this.#watch.node;
    } else if (n > 1 && stillBusy) {
      this.#rotation = this.#rotation === undefined ? Math.floor(random() * n) : this.#rotation + 1;
      this.probeAt = this.#rotation % n;
    } else {
      this.probeAt = undefined;
    }
    this.#listening = listening;
    this.#expiring = expiring;
    return delay;
  }

  /**
   * Sleep `nap.delay` ms, or until a grant of ours ends in `line` or (listening) a release wakes
   * `nap.member`; either makes the next look ask every node.
   */
  async pause(
    line: LocalLine,
    spot: LineSpot,
    nap: {
      readonly delay: number;
      readonly signal: AbortSignal | undefined;
      readonly member: string | undefined;
    },
  ): Promise<void> {
    const { delay, signal, member } = nap;
    let woken = false;
    const changed = line.changed(spot);
    const released =
      this.#listening && member !== undefined ? this.#watch?.woken(member) : undefined;
    const either = released === undefined ? changed : Promise.race([changed, released]);
    await sleep(
      delay,
      signal,
      either.then(() => {
        woken = true;
      }),
    );
    if (woken) this.probeAt = undefined;
    this.#dozed = this.#listening && !woken && !this.#expiring;
  }

  /** Our turn came in the local line: the lock is likely free, ask every node. */
  turn(): void {
    this.probeAt = undefined;
  }

  /** Granted after a sleep that no wake-up ended: the stream may be dead (see `Watch.missed`). */
  granted(): void {
    if (this.#dozed) this.#watch?.missed();
  }

  close(): void {
    this.#watch?.close();
  }

  /**
   * Listen for wake-ups of the key's wait room on the first node that reported the key held,
   * if the budget leaves room for the stream (one subrequest) beside a round and its cleanup.
   */
  #listen(
    outcomes: readonly NodeOutcome[],
    budget: Budget | undefined,
    spare: number,
  ): Watch | undefined {
    const at = outcomes.find((o) => o.status === "held")?.index;
    const node = at === undefined ? undefined : this.core.nodes[at];
    if (node === undefined || (budget !== undefined && budget.remainingSubrequests() <= spare)) {
      return undefined;
    }
    const watch = this.core.channels.watch(node, (this.keys[0] as KeyTriple).room);
    if (watch?.opened === true) budget?.charge(1);
    return watch;
  }
}
