import { budget as budgets, type LambdaContextLike } from "../../budget";
import {
  type IdempotencyOptions,
  keptHeaders,
  REPLAYED,
  resolveIdempotency,
  runIdempotent,
} from "../../idempotency";
import type { Lock } from "../../lock";
import {
  bodyOf,
  type HttpEvent,
  type HttpResult,
  headersOf,
  requestOf,
  resultOf,
  structured,
  wantsMultiValue,
} from "./http";
import { clearLockAnswer, isLockAnswer } from "./lock-answer";
import type { LambdaContext } from "./types";

/** What the option callbacks get: the event and the invocation's context. */
export interface IdempotentInvocation<TEvent, TContext> {
  readonly event: TEvent;
  readonly context: TContext;
}

/** Options of {@link withIdempotency}: see `IdempotencyOptions`; callbacks get `{ event, context }`. */
export type WithIdempotencyOptions<
  TEvent extends HttpEvent,
  TContext extends LambdaContextLike = LambdaContext,
> = IdempotencyOptions<IdempotentInvocation<TEvent, TContext>>;

/**
 * `Idempotency-Key` for an AWS Lambda HTTP handler — API Gateway REST API (payload 1.0), HTTP API
 * (1.0 or 2.0), a Function URL (2.0) or an ALB (with or without multi-value headers) — shaped like `withLock`: the handler runs at most once per
 * caller and key while its response is kept (`ttl`, 24 h), and retries get it replayed with
 * `Idempotency-Replayed: true`; the same rules as the Hono `idempotency()` middleware (bare or
 * quoted keys, the same caller scope, 409 with `Retry-After: 1` while the first runs, 422 for
 * another fingerprint, 400 for a bad key, 503 with a generic `detail` without a quorum (and one
 * `console.error` line, unless `onUnavailable`), nothing kept for a 5xx, a throw, a lost claim,
 * a busy answer of a `withLock` inside (its `onBusy` value, whatever it is) or an answer `store`
 * does not keep — by default 408, 409, 425 and 429; the record re-sent until a majority has it, else `onUnrecorded` is called and
 * the claim left to expire; 204, 205 and 304 replay with an empty body). The claim's TTL follows
 * `context.getRemainingTimeInMillis()`, and the handler gets the claim as its third argument
 * (stop when `lock.signal` aborts). Everything is awaited before the handler returns, every
 * node's answer to the record's COMPLETE or the release included (each bounded by its request
 * timeout): a frozen container runs nothing afterwards.
 *
 * @throws {ConfigurationError} at wrap time, naming the bad option
 * @example
 * import { createLocks, type Locks, nodesFromEnv } from "edgelock";
 * import { withIdempotency } from "edgelock/lambda";
 *
 * let locks: Locks | undefined;
 * const getLocks = () => (locks ??= createLocks({ nodes: nodesFromEnv(process.env) }));
 *
 * export const handler = withIdempotency(
 *   async (event: APIGatewayProxyEventV2, context, lock) => {
 *     const charge = await chargeCard(JSON.parse(event.body ?? "{}"), { signal: lock.signal });
 *     return { statusCode: 201, headers: { "content-type": "application/json" }, body: JSON.stringify(charge) };
 *   },
 *   { locks: getLocks },
 * );
 */
export function withIdempotency<
  TEvent extends HttpEvent,
  TResult,
  TContext extends LambdaContextLike = LambdaContext,
>(
  handler: (event: TEvent, context: TContext, lock: Lock | undefined) => Promise<TResult>,
  options: WithIdempotencyOptions<TEvent, TContext>,
): (event: TEvent, context: TContext) => Promise<TResult | HttpResult> {
  const resolved = resolveIdempotency(options, "withIdempotency");
  return async function idempotentHandler(event: TEvent, context: TContext) {
    const request = requestOf(event);
    const multiValue = wantsMultiValue(event);
    const outcome = await runIdempotent(
      resolved,
      {
        context: { event, context },
        method: request.method,
        path: request.path,
        host: request.host,
        header: request.header,
        body: async () => request.body,
        budget: budgets.lambda(context),
      },
      async (lock) => {
        clearLockAnswer(context);
        const result = await handler(event, context, lock);
        const shaped = structured(result);
        return {
          result,
          status: shaped.statusCode,
          // A `withLock` inside answered busy (its `onBusy`): never kept, whatever the status.
          transient: isLockAnswer(context, result),
          capture: async () => ({
            status: shaped.statusCode,
            headers: keptHeaders(headersOf(shaped), resolved.headers),
            body: bodyOf(shaped),
            base64: shaped.isBase64Encoded === true,
          }),
        };
      },
    );
    switch (outcome.kind) {
      case "pass":
        return handler(event, context, undefined);
      case "ran":
        return outcome.result;
      case "problem":
        return resultOf(
          outcome.problem.status,
          outcome.problem.headers,
          new TextEncoder().encode(outcome.problem.body),
          { multiValue },
        );
      case "replay": {
        const { response } = outcome;
        const headers = [...response.headers, [REPLAYED.toLowerCase(), "true"] as const];
        return resultOf(response.status, headers, response.body, {
          base64: response.base64 === true,
          multiValue,
        });
      }
    }
  };
}
