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
 * What a waiting acquire tells its caller when it gives up: docs/SAFETY.md §6 "What a failure
 * after waiting says". It decides only which error is thrown, never whether another look follows
 * or who holds the lock.
 *
 * @module
 */

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
  const prefix = `${error.subject} "${error.key}": `;
  const last = error.message.startsWith(prefix)
    ? error.message.slice(prefix.length)
    : error.message;
  const seconds = (Math.max(0, elapsedMs) / 1000).toFixed(1);
  const { outcomes, subject } = error;
  const options =
    error.cause === undefined ? { outcomes, subject } : { outcomes, subject, cause: error.cause };
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
 * const tries = triesOf(core, key, began);
 * const refused = tries.refused(verdict);
 * if (performance.now() >= waitUntil) throw tries.giveUp(refused.error);
 */
export interface Tries {
  /** Record a refused look: the refusal the waiter paces by, and what waiting callers report. */
  refused(verdict: Verdict): Refused;
  /** The failure to throw: after more than one look, it says how long and how often it tried. */
  giveUp(error: LockError): LockError;
  /** The last look's failure, if this caller looked at all. */
  failure(): LockError | undefined;
  /** The budget cannot cover another look (`shortfall`): the last look's failure, so caused. */
  short(shortfall: LockError): LockError;
  /** Looks recorded so far (a queued wait that follows counts on from there). */
  looked(): number;
}

/** The {@link Tries} of an acquire of `key` that began at `began` (`performance.now()`). */
export function triesOf(core: LockCore, key: string, began: number): Tries {
  /** The error to report if waiting ends now: the last look that said something. */
  let lastError: LockError | undefined;
  let lastWhy: string | undefined;
  /** The last look on every node (not a probe): what a busy probe's error reports. */
  let lastRound: LastLook | undefined;
  let looks = 0;
  const giveUp = (error: LockError): LockError =>
    looks > 1 ? afterAttempts(error, looks, performance.now() - began) : error;
  return {
    refused(verdict) {
      const { outcomes, why, busy, probed } = verdict;
      looks++;
      const failedProbe = probed && !busy;
      if (!probed) lastRound = { outcomes, why };
      if (!failedProbe || lastError === undefined) {
        lastError = failureOf(core, key, { outcomes, why });
        lastWhy = why;
        if (probed && lastRound !== undefined && isLockBusyError(lastError)) {
          // One node's answer says nothing of a majority: report the cluster as last seen whole.
          const { retryAfter } = lastError;
          lastError = new LockBusyError(key, retryAfter, {
            outcomes,
            lastRound: lastRound.outcomes,
          });
        }
      }
      const error = lastError;
      // Callers waiting in line behind this one report the cluster, not a probe's one node.
      const last =
        probed && lastRound !== undefined ? lastRound : { outcomes: error.outcomes, why: lastWhy };
      return { ...verdict, error, failedProbe, last };
    },
    giveUp,
    failure: () => lastError && giveUp(lastError),
    looked: () => looks,
    short(shortfall) {
      if (lastError === undefined) return shortfall;
      const last = { outcomes: lastError.outcomes, why: lastWhy };
      return giveUp(failureOf(core, key, last, shortfall));
    },
  };
}
