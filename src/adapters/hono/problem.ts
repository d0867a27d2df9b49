/**
 * The default responses of the `lock()` and `limit()` middleware: RFC 9457 problem details with
 * `Retry-After`.
 *
 * @module
 */
import type { Context } from "hono";
import type {
  BudgetExhaustedError,
  LockBusyError,
  QuorumError,
  SemaphoreBusyError,
} from "../../errors";

/** An RFC 9457 problem details object (the members the middleware sends). */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
}

/**
 * `Retry-After` for a quorum failure, in seconds. No node told us when it will be back; one second
 * lets a client retry soon without hammering nodes that are restarting.
 */
export const UNAVAILABLE_RETRY_AFTER_S = 1;

/**
 * `Retry-After` of the default busy answer, ms (sent in whole seconds). Not the holder's remaining
 * TTL: `lock()` auto-extends, so the TTL is the lease again whenever the holder extends and says
 * nothing about when it finishes (a 10 s lease answered "10 s" to requests that ended in about
 * 1 s). A short fixed hint lets the client come back soon; one that comes too early costs one
 * more 409, not a wrong answer.
 */
export const BUSY_RETRY_AFTER = 1_000;

/** Whole seconds, rounded up and at least 1 (`Retry-After: 0` invites an immediate retry storm). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** A problem+json response through `c.body`, so headers set earlier on `c` are kept. */
export function problemResponse(
  c: Context,
  problem: Problem,
  retryAfter: number | undefined,
): Response {
  const headers: Record<string, string> = { "Content-Type": "application/problem+json" };
  if (retryAfter !== undefined) headers["Retry-After"] = String(retryAfter);
  return c.body(JSON.stringify(problem), problem.status as 409 | 429 | 503, headers);
}

/**
 * Default `onBusy`: 409 Conflict with `Retry-After: retryAfterMs` in whole seconds (default
 * {@link BUSY_RETRY_AFTER}), whatever the holder's TTL.
 */
export function busyResponse(
  c: Context,
  _error: LockBusyError,
  retryAfterMs: number = BUSY_RETRY_AFTER,
): Response {
  const seconds = retryAfterSeconds(retryAfterMs);
  return problemResponse(
    c,
    {
      type: "urn:edgelock:problem:lock-busy",
      title: "Resource is locked",
      status: 409,
      detail: `Another request holds the lock for this resource; retry in ${seconds} s.`,
    },
    seconds,
  );
}

/**
 * Default `onBusy` of `limit()`: 429 Too Many Requests with `Retry-After: retryAfterMs` in whole
 * seconds (default {@link BUSY_RETRY_AFTER}). Not the error's `retryAfter`: `limit()` auto-extends
 * its permits, so their TTLs say nothing about when a handler finishes (as for a lock's holder).
 *
 * @example
 * if (isSemaphoreBusyError(error)) return capacityResponse(c, error, retryAfter);
 */
export function capacityResponse(
  c: Context,
  _error: SemaphoreBusyError,
  retryAfterMs: number = BUSY_RETRY_AFTER,
): Response {
  const seconds = retryAfterSeconds(retryAfterMs);
  return problemResponse(
    c,
    {
      type: "urn:edgelock:problem:at-capacity",
      title: "Too Many Requests",
      status: 429,
      detail: `Every permit of this limit is in use; retry in ${seconds} s.`,
    },
    seconds,
  );
}

/** What a quorum failure left undecided: the lock, or a semaphore's permits. */
const held = (error: QuorumError): string => (error.subject === "semaphore" ? "permits" : "lock");

/**
 * Default `onError`: 503 Service Unavailable. A quorum failure gets `Retry-After`; an exhausted
 * budget does not, because it is this invocation's limit and a new request starts a new budget.
 * The error's words (which nodes failed and why, by index and host; the budget left) go into
 * `detail` only with `expose`: by default a client learns what happened, not the deployment.
 * `taken` names what the budget could not cover (`limit()`: `"a permit"`).
 */
export function unavailableResponse(
  c: Context,
  error: QuorumError | BudgetExhaustedError,
  expose = false,
  taken = "the lock",
): Response {
  if (error.name === "QuorumError") {
    return problemResponse(
      c,
      {
        type: "urn:edgelock:problem:lock-unavailable",
        title: "Lock service unavailable",
        status: 503,
        // The nodes by index and host with each one's reason (never a token) only when the app
        // opts in: they tell a client the deployment's hosts and who holds what. The manager's
        // onEvent gets them either way.
        detail: `Too few lock nodes answered to decide who holds the ${held(error as QuorumError)}.${expose ? ` ${error.message}` : ""}`,
      },
      UNAVAILABLE_RETRY_AFTER_S,
    );
  }
  return problemResponse(
    c,
    {
      type: "urn:edgelock:problem:budget-exhausted",
      title: "Execution budget exhausted",
      status: 503,
      detail: `This invocation has too little time or too few subrequests left to take ${taken}${expose ? ` (${error.message})` : ""}.`,
    },
    undefined,
  );
}
