import {
  isLockBusyError,
  isQuorumError,
  LockBusyError,
  type LockError,
  QuorumError,
} from "../../errors";
import type { LockCore } from "../core";
import { failureOf } from "../failure";
import type { Verdict } from "../look";
import type { LastLook } from "./queue";
import type { Refused } from "./waiter";

/**
 * The failure a waiting acquire gives up with, saying how long and how often it tried: a
 * `QuorumError` after 5 s against dead nodes would otherwise read like one failed round, and the
 * user could not tell a wait spent retrying from none at all. Its outcomes and cause are the last
 * look's. Other errors are returned as they are: a busy error's holders and `retryAfter` already
 * say why waiting did not help.
 *
 * @param looks rounds and probes the acquire ran (more than one: it retried)
 * @param elapsedMs from the call to now, on the monotonic clock
 * @example
 * afterAttempts(error, 12, 5012) // lock "k": gave up after 12 attempts over 5.0 s; the last: no majority (…)
 */
export function afterAttempts(error: LockError, looks: number, elapsedMs: number): LockError {
  if (!isQuorumError(error)) return error;
  const prefix = `lock "${error.key}": `;
  const last = error.message.startsWith(prefix)
    ? error.message.slice(prefix.length)
    : error.message;
  const seconds = (Math.max(0, elapsedMs) / 1000).toFixed(1);
  const options =
    error.cause === undefined
      ? { outcomes: error.outcomes }
      : { outcomes: error.outcomes, cause: error.cause };
  return new QuorumError(
    error.key,
    `gave up after ${looks} attempts over ${seconds} s; the last: ${last}`,
    options,
  );
}

/**
 * The failure bookkeeping of one waiting acquire (docs/SAFETY.md §6 "What a failure after waiting
 * says"): its refused looks, and the error it gives up with. A busy probe's error counts the
 * holders of the last round on every node (one node's answer says nothing of a majority), and a
 * failed probe (no answer) keeps the error of the look before it. It decides only which error is
 * thrown, never whether another look follows.
 *
 * @example
 * const tries = new Tries(core, key, began);
 * const refused = tries.refused(verdict);
 * if (performance.now() >= waitUntil) throw tries.giveUp(refused.error);
 */
export class Tries {
  /** The error to report if waiting ends now: the last look that said something. */
  #error: LockError | undefined;
  #why: string | undefined;
  /** The last look on every node (not a probe): what a busy probe's error reports. */
  #round: LastLook | undefined;
  #looks = 0;

  constructor(
    private readonly core: LockCore,
    private readonly key: string,
    private readonly began: number,
  ) {}

  /** Record a refused look: the refusal the waiter paces by, and what waiting callers report. */
  refused(verdict: Verdict): Refused {
    const { core, key } = this;
    const { outcomes, why, busy } = verdict;
    this.#looks++;
    const failedProbe = verdict.probed && !busy;
    if (!verdict.probed) this.#round = { outcomes, why };
    let error = this.#error;
    if (!failedProbe || error === undefined) {
      error = failureOf(core, key, { outcomes, why });
      this.#why = why;
      if (verdict.probed && this.#round !== undefined && isLockBusyError(error)) {
        // One node's answer says nothing of a majority: report the cluster as last seen whole.
        const { retryAfter } = error;
        error = new LockBusyError(key, retryAfter, { outcomes, lastRound: this.#round.outcomes });
      }
      this.#error = error;
    }
    // Callers waiting in line behind this one report the cluster, not a probe's one node.
    const last =
      verdict.probed && this.#round !== undefined
        ? this.#round
        : { outcomes: error.outcomes, why: this.#why };
    return { outcomes, error, failedProbe, busy, last };
  }

  /** The failure to throw: after more than one look, it says how long and how often it tried. */
  giveUp(error: LockError): LockError {
    const looks = this.#looks;
    return looks > 1 ? afterAttempts(error, looks, performance.now() - this.began) : error;
  }

  /** The last look's failure, if this caller looked at all. */
  failure(): LockError | undefined {
    return this.#error && this.giveUp(this.#error);
  }

  /** The budget cannot cover another look (`shortfall`): the last look's failure, with that cause. */
  short(shortfall: LockError): LockError {
    const error = this.#error;
    if (error === undefined) return shortfall;
    const last = { outcomes: error.outcomes, why: this.#why };
    return this.giveUp(failureOf(this.core, this.key, last, shortfall));
  }
}
