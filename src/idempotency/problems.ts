/**
 * The answers of the idempotency layer that are not the handler's: RFC 9457 problem details, the
 * `type` naming the section of draft-ietf-httpapi-idempotency-key-header-06 that defines the case
 * (§2.1 the header, §2.7 the error scenarios), in the same shape as the lock middleware's 409/503.
 *
 * @module
 */

const DRAFT = "https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header-06";

/** A problem answer, runtime-neutral: each adapter turns it into its own response. */
export interface ProblemAnswer {
  readonly status: 400 | 409 | 422 | 503;
  readonly headers: readonly (readonly [string, string])[];
  /** The problem+json body. */
  readonly body: string;
}

function problem(
  status: ProblemAnswer["status"],
  type: string,
  title: string,
  detail: string,
  retryAfterS?: number,
): ProblemAnswer {
  const headers: [string, string][] = [["content-type", "application/problem+json"]];
  if (retryAfterS !== undefined) headers.push(["retry-after", String(retryAfterS)]);
  return { status, headers, body: JSON.stringify({ type, title, status, detail }) };
}

/** Whole seconds, rounded up, at least 1. */
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** 400: no `Idempotency-Key` where `required: true`. */
export const missingKey = (): ProblemAnswer =>
  problem(
    400,
    `${DRAFT}#section-2.7`,
    "Idempotency-Key required",
    "This operation requires an Idempotency-Key header (1 to 255 printable ASCII characters, bare or as a quoted string).",
  );

/** 400: the header is not a valid key (`why` says how). */
export const invalidKey = (why: string): ProblemAnswer =>
  problem(400, `${DRAFT}#section-2.1`, "Invalid Idempotency-Key", `Idempotency-Key: ${why}.`);

/** 422: the key was first used for a different request (method, path or body). */
export const keyReused = (): ProblemAnswer =>
  problem(
    422,
    `${DRAFT}#section-2.7`,
    "Idempotency-Key reused",
    "This Idempotency-Key was used for a different request; use a new key for a new request.",
  );

/**
 * 409: the first request with this key is still running; retry after `retryAfterMs` (the
 * `retryAfter` option, not the claim's TTL: the claim is auto-extended while the request runs).
 */
export const inProgress = (retryAfterMs: number): ProblemAnswer =>
  problem(
    409,
    `${DRAFT}#section-2.7`,
    "Request in progress",
    `A request with this Idempotency-Key is still being processed; retry in ${seconds(retryAfterMs)} s.`,
    seconds(retryAfterMs),
  );

/**
 * 409: completed, but its response was too large to keep (or cannot be read): it will not run
 * again.
 */
export const alreadyProcessed = (status: number | undefined): ProblemAnswer =>
  problem(
    409,
    `${DRAFT}#section-2.7`,
    "Request already processed",
    `A request with this Idempotency-Key was processed${status === undefined ? "" : ` (status ${status})`}; its response was not kept for replay, and it will not run again.`,
  );

/**
 * 503: too few lock nodes answered, or the budget is spent. The error's words (`message`: which
 * nodes failed and why, by index and host) go into `detail` only with `expose`; otherwise the
 * client learns what happened, not the deployment's hosts or lock state.
 */
export const unavailable = (name: string, message: string, expose: boolean): ProblemAnswer =>
  name === "BudgetExhaustedError"
    ? problem(
        503,
        "urn:edgelock:problem:budget-exhausted",
        "Execution budget exhausted",
        expose
          ? message
          : "This invocation had too little time or too few subrequests left to claim the Idempotency-Key; it did not run.",
      )
    : problem(
        503,
        "urn:edgelock:problem:lock-unavailable",
        "Lock service unavailable",
        `Too few lock nodes answered to claim this Idempotency-Key; it did not run.${expose ? ` ${message}` : ""}`,
        1,
      );
