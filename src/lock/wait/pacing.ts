import type { Budget } from "../../budget";
import { LockBusyError, type LockError, type NodeOutcome } from "../../errors";
import type { LockCore } from "../core";
import { random, sleep } from "../timing";
import { Backoff } from "./backoff";
import type { LineSpot, LocalLine } from "./queue";

/**
 * Waiting strategy 3, pacing: when to look again and how (a probe of one node, or every node).
 * Keeps docs/SAFETY.md §6 "Progress": it decides only when to look, and every look is an
 * ordinary acquire round. Only callers that do not wait in the nodes' queues poll (a lock on
 * several keys, nodes that cannot stream): see `queued.ts` for the others.
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
 * Waiting strategy 3, pacing: how long a polling caller sleeps after a refused look and how it
 * looks next (docs/SAFETY.md §6): {@link Backoff} (holders' PTTL, full jitter, a turnover-aware
 * cap), and while the lock stays busy each look probes one node (rotating from a random one: one
 * request instead of N; the others are asked once the probe granted). A change in the local line
 * or an expiring holder makes the next look ask every node.
 *
 * Pacing decides only when to look: every look is an ordinary acquire round.
 *
 * @example
 * const pacing = new Pacing(core);
 * const delay = pacing.plan(refusal, waitUntil, budget);
 * await pacing.pause(line, spot, { delay, signal });
 */
export class Pacing {
  /** Node to probe at the next look; `undefined`: ask every node. */
  probeAt: number | undefined;
  #backoff: Backoff | undefined;
  #rotation: number | undefined;

  constructor(private readonly core: LockCore) {}

  /** Plan the sleep after a refused look: returns its length (ms) and sets {@link probeAt}. */
  plan(refusal: Refusal, waitUntil: number, budget: Budget | undefined): number {
    const { options, nodes } = this.core;
    const { error, failedProbe } = refusal;
    const now = performance.now();
    const freeIn = error instanceof LockBusyError ? error.retryAfter : undefined;
    this.#backoff ??= new Backoff(options.retryDelay, options.retryDelayMax);
    const backoff = this.#backoff;
    if (!failedProbe) backoff.observe(freeIn, now);
    const expiring = freeIn !== undefined && freeIn < backoff.cap();
    const budgetLeft = budget === undefined ? Infinity : budget.remaining() - budget.reserve;
    const nap = backoff.next(freeIn);
    const delay = failedProbe ? 0 : Math.min(nap, waitUntil - now, Math.max(0, budgetLeft));
    const stillBusy = error instanceof LockBusyError && !failedProbe && !expiring;
    const n = nodes.length;
    if (n > 1 && stillBusy) {
      this.#rotation = this.#rotation === undefined ? Math.floor(random() * n) : this.#rotation + 1;
      this.probeAt = this.#rotation % n;
    } else {
      this.probeAt = undefined;
    }
    return delay;
  }

  /** Sleep `nap.delay` ms, or until a grant of ours ends in `line` (then ask every node next). */
  async pause(
    line: LocalLine,
    spot: LineSpot,
    nap: { readonly delay: number; readonly signal: AbortSignal | undefined },
  ): Promise<void> {
    let woken = false;
    await sleep(
      nap.delay,
      nap.signal,
      line.changed(spot).then(() => {
        woken = true;
      }),
    );
    if (woken) this.probeAt = undefined;
  }

  /** Our turn came in the local line: the lock is likely free, ask every node. */
  turn(): void {
    this.probeAt = undefined;
  }
}
