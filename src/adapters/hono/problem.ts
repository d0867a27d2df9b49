/**
 * The default responses of the `lock()` middleware: RFC 9457 problem details with `Retry-After`.
 *
 * @module
 */
import type { Context } from "hono";
import type { BudgetExhaustedError, LockBusyError, QuorumError } from "../../errors";

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
  return c.body(JSON.stringify(problem), problem.status as 409 | 503, headers);
}

/** Default `onBusy`: 409 Conflict, `Retry-After` from the holder's remaining time. */
export function busyResponse(c: Context, error: LockBusyError): Response {
  const seconds = retryAfterSeconds(error.retryAfter);
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
 * Default `onError`: 503 Service Unavailable. A quorum failure gets `Retry-After`; an exhausted
 * budget does not, because it is this invocation's limit and a new request starts a new budget.
 */
export function unavailableResponse(
  c: Context,
  error: QuorumError | BudgetExhaustedError,
): Response {
  if (error.name === "QuorumError") {
    return problemResponse(
      c,
      {
        type: "urn:edgelock:problem:lock-unavailable",
        title: "Lock service unavailable",
        status: 503,
        // The nodes by index and host with each one's reason (never a token), so that whoever
        // reads the response or its log knows what to fix; `onError` can answer otherwise.
        detail: `Too few lock nodes answered to decide who holds the lock. ${error.message}`,
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
      detail: `This invocation has too little time or too few subrequests left to take the lock (${error.message}).`,
    },
    undefined,
  );
}
