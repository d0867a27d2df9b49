import type { Context, Env, MiddlewareHandler } from "hono";
import {
  type IdempotencyOptions,
  keptHeaders,
  REPLAYED,
  resolveIdempotency,
  runIdempotent,
} from "../../idempotency";
import { defaultBudget } from "./context";
import type { LockEnv, LockVariables } from "./middleware";

/**
 * Options of {@link idempotency}: see `IdempotencyOptions` (`locks`, `methods`, `required`, `ttl`,
 * `lease`, `wait`, `maxBody`, `headers`, `scope`, `fingerprint`, `budget`), each a function of the
 * request's `Context` where it is one.
 */
// biome-ignore lint/suspicious/noExplicitAny: as hono's createMiddleware: untyped apps get `any` env
export type IdempotencyMiddlewareOptions<E extends Env = any> = IdempotencyOptions<Context<E>>;

/** Variables the middleware sets: `c.var.lock` is the claim held while the handler runs. */
export type IdempotencyVariables = LockVariables;

/**
 * Hono middleware for `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header): a request
 * with a key runs its handler at most once per caller while the response is kept (`ttl`, 24 h);
 * retries get the first response replayed with `Idempotency-Replayed: true`.
 *
 * - method not in `methods` (POST, PATCH): passes through; no key: passes through (`required`:
 *   400); a key that is not a structured-field string of 1–255 characters: 400;
 * - first request: claims the key with a quorum lock (TTL from the budget, auto-extended; the
 *   claim is `c.var.lock`: honour its `signal`), runs the handler, keeps status, the allow-listed
 *   headers and the body on the nodes;
 * - same key and fingerprint, completed: the stored response, handler not run;
 * - same key while the first runs: 409 with `Retry-After` (or wait up to `wait` ms);
 * - same key, another fingerprint (method, path, body): 422;
 * - the handler answers 5xx, throws, or loses its claim: nothing kept, claim released (a retry
 *   runs again); a body over `maxBody`: kept as "completed without replay" (a retry gets 409);
 * - a majority of nodes down: 503, handler not run.
 *
 * Keys are scoped by the caller (a SHA-256 of `Authorization` and `Cookie`, or `scope(c)`), and
 * `Set-Cookie` is never stored. Errors are `application/problem+json`.
 *
 * @throws {ConfigurationError} at construction, naming the bad option
 * @example
 * ```ts
 * app.post("/invoices/:id/charge", idempotency({ locks }), async (c) => {
 *   const charge = await chargeInvoice(c.req.param("id"), { signal: c.var.lock.signal });
 *   return c.json(charge, 201);
 * });
 * // curl -X POST -H 'Idempotency-Key: "8e03978e-40d5"' …   (a retry gets the same 201)
 * ```
 */
// biome-ignore lint/suspicious/noExplicitAny: as hono's createMiddleware: untyped apps get `any` env
export function idempotency<E extends Env = any>(
  options: IdempotencyMiddlewareOptions<E>,
): MiddlewareHandler<LockEnv<E>> {
  const resolved = resolveIdempotency(options as IdempotencyOptions<Context>, "idempotency");
  const middleware: MiddlewareHandler = async function idempotency(c, next) {
    const url = new URL(c.req.url);
    const outcome = await runIdempotent(
      resolved,
      {
        context: c,
        method: c.req.method,
        path: `${url.pathname}${url.search}`,
        header: (name) => c.req.header(name),
        // hono keeps the body it read: the handler can still read it (json(), text(), …).
        body: async () => new Uint8Array(await c.req.arrayBuffer()),
        budget: defaultBudget(c),
      },
      async (lock) => {
        c.set("lock", lock);
        await next();
        const res = c.res;
        // hono's compose turned a thrown error into c.error and an error response.
        const status = c.error === undefined ? res.status : Math.max(res.status, 500);
        return {
          result: undefined,
          status,
          capture: async () => ({
            status: res.status,
            headers: keptHeaders(res.headers, resolved.headers),
            body: new Uint8Array(await res.clone().arrayBuffer()),
          }),
        };
      },
    );
    switch (outcome.kind) {
      case "pass":
        await next();
        return;
      case "ran":
        return;
      case "problem": {
        const { problem } = outcome;
        return c.body(problem.body, problem.status, Object.fromEntries(problem.headers));
      }
      case "replay": {
        const { response } = outcome;
        const headers = new Headers(response.headers.map(([k, v]) => [k, v] as [string, string]));
        headers.set(REPLAYED, "true");
        return new Response(response.body as Uint8Array<ArrayBuffer>, {
          status: response.status,
          headers,
        });
      }
    }
  };
  return middleware as MiddlewareHandler<LockEnv<E>>;
}
