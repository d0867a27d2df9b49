/**
 * Idempotency-Key for HTTP handlers (draft-ietf-httpapi-idempotency-key-header): the
 * runtime-neutral core that the `edgelock/hono` and `edgelock/lambda` adapters map requests to.
 *
 * @module
 */
export { DEFAULT_SCOPE_COOKIES, DEFAULT_SCOPE_HEADERS } from "./digest";
export { IDEMPOTENCY_KEY, MAX_KEY_LENGTH, parseKey } from "./header";
export {
  DEFAULT_HEADERS,
  DEFAULT_RETRY_AFTER,
  defaultStore,
  type IdempotencyOptions,
  type ResolvedIdempotency,
  resolveIdempotency,
  TRANSIENT_STATUSES,
  type UnrecordedAnswer,
} from "./options";
export type { ProblemAnswer } from "./problems";
export type { StoredResponse } from "./record";
export {
  type HandlerAnswer,
  type IdempotentOutcome,
  type IdempotentRequest,
  keptHeaders,
  runIdempotent,
} from "./run";
export {
  type OnUnavailable,
  reportUnavailable,
  routeOf,
  type UnavailableInfo,
  unavailableLine,
} from "./unavailable-log";

/** The response header that marks a replayed response. */
export const REPLAYED = "Idempotency-Replayed";
