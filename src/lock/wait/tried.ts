import { isQuorumError, type LockError, QuorumError } from "../../errors";

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
