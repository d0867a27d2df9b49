/**
 * Idempotency-Key for HTTP handlers (draft-ietf-httpapi-idempotency-key-header): the
 * runtime-neutral core that the `edgelock/hono` and `edgelock/lambda` adapters map requests to.
 *
 * @module
 */
export { IDEMPOTENCY_KEY, MAX_KEY_LENGTH, parseKey } from "./header";
export {
  DEFAULT_HEADERS,
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

/** The response header that marks a replayed response. */
export const REPLAYED = "Idempotency-Replayed";
