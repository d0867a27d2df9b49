/**
 * The life of a lock handle as one state machine: the phases a handle goes through and the steps
 * that move it, in one table. Every step is a client step of docs/SAFETY.md §3 ("What each client
 * step keeps"); the handle takes a step only through {@link Life.take}, so a step the table does
 * not allow is a programming error in the handle, never a node's answer, and throws.
 *
 * @module
 */

/**
 * Where a handle is in its life.
 * - `held`: the interval is open (granted, resumed, or handed over to this caller).
 * - `lost`: a loss ended the interval: an extension found our token gone, or the abort timer
 *   fired before the validity's or the budget's end.
 * - `released`: the holder called `release()`.
 * - `completed`: the holder's wrapper ended it with a done marker (`once()`, Idempotency-Key).
 * - `handed`: turned into a ticket; another invocation holds the lock from there.
 */
export type Phase = "held" | "lost" | "released" | "completed" | "handed";

/** What moves a handle from one phase to the next. */
export type Step = "lose" | "release" | "complete" | "hand-on";

/**
 * The allowed steps: `TRANSITIONS[from][step]` is the phase after `step`, absent where `step` is
 * not allowed from `from`. A phase that is not `held` never comes back to it (a signal never
 * un-aborts), and `completed` and `handed` are final.
 */
export const TRANSITIONS: {
  readonly [From in Phase]: { readonly [S in Step]?: Phase };
} = {
  held: {
    // §3 "validity" (the abort timer, one request timeout before V or the budget's deadline) and
    // §3 "extend" (a majority answered that our token is gone, or the round outlasted its TTL).
    lose: "lost",
    // §3 "release": the interval ends here, before any request of the release is sent.
    release: "released",
    // §3 "complete (`once()`)": the interval ends before COMPLETE is sent.
    complete: "completed",
    // §3 "ticket": only once the extension to the ticket's lease succeeded while still held;
    // no request from this handle after it (A8: the holder stopped at `ticket()`).
    "hand-on": "handed",
  },
  lost: {
    // §3 "release": a lost lock is still released, so the nodes that keep our token drop it now
    // rather than at its TTL (RELEASE removes only our own token: L1).
    release: "released",
    // §3 "complete (`once()`)": a run that finished after its lock was lost still records itself;
    // COMPLETE writes only over our own token or an absent key (§2), never over another holder.
    complete: "completed",
  },
  released: {
    // §3 "complete (`once()`)": a job that released its own lock is still recorded, after that
    // release round (the two never interleave).
    complete: "completed",
  },
  completed: {},
  handed: {},
};

/** A step the table does not allow: a bug in the handle, never a node's answer. */
export class LifecycleError extends Error {
  override name = "LifecycleError";
  constructor(
    readonly from: Phase,
    readonly step: Step,
  ) {
    super(`edgelock internal error: a lock handle cannot take the step "${step}" when ${from}`);
  }
}

/**
 * The phase after `step` from `from`.
 *
 * @throws {LifecycleError} the table does not allow `step` from `from`
 * @example
 * next("held", "release") // "released"
 */
export function next(from: Phase, step: Step): Phase {
  const to = TRANSITIONS[from][step];
  if (to === undefined) throw new LifecycleError(from, step);
  return to;
}

/**
 * One handle's phase. Read it with `now()`, a call rather than a field, so that a read after an
 * `await` is never narrowed by a check made before it (the phase may have moved meanwhile).
 *
 * @example
 * const life = new Life();
 * life.take("release");
 * life.now() // "released"
 */
export class Life {
  #phase: Phase = "held";

  /** The current phase. */
  now(): Phase {
    return this.#phase;
  }

  /**
   * Take `step` and return the new phase.
   *
   * @throws {LifecycleError} the table does not allow `step` now (the phase is unchanged)
   */
  take(step: Step): Phase {
    this.#phase = next(this.#phase, step);
    return this.#phase;
  }
}
