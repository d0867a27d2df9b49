import type { Context, Env, MiddlewareHandler } from "hono";
import {
  type IdempotencyOptions,
  keptHeaders,
  REPLAYED,
  resolveIdempotency,
  runIdempotent,
} from "../../idempotency";
import type { Lock } from "../../lock/types";
import { readBody } from "./captured-body";
import { defaultBudget, executionCtxOf } from "./context";

/**
 * Options of {@link idempotency}: see `IdempotencyOptions` (`locks`, `methods`, `required`, `ttl`,
 * `lease`, `wait`, `maxBody`, `headers`, `scope`, `fingerprint`, `budget`, `store`,
 * `onUnrecorded`), each a function of the request's `Context` where it is one.
 */
// biome-ignore lint/suspicious/noExplicitAny: as hono's createMiddleware: untyped apps get `any` env
export type IdempotencyMiddlewareOptions<E extends Env = any> = IdempotencyOptions<Context<E>>;

/**
 * Variables the middleware sets: `c.var.lock` is the claim held while the handler runs, and
 * `undefined` for a request the middleware passes through (no `Idempotency-Key` without
 * `required`, or a method not in `methods`).
 */
export type IdempotencyVariables = { lock: Lock | undefined };

/** The middleware's Hono env: the caller's env (if typed) plus {@link IdempotencyVariables}. */
export type IdempotencyEnv<E extends Env> = 0 extends 1 & E
  ? { Variables: IdempotencyVariables }
  : E & { Variables: IdempotencyVariables };

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
 * - the handler answers 5xx, throws, loses its claim, or answers what `store` does not keep
 *   (by default 408, 409, 425, 429, and `lock()`'s busy/unavailable problem+json): nothing kept,
 *   claim released (a retry runs again); a body over `maxBody`: kept as "completed without
 *   replay" (a retry gets 409);
 * - the record is written (re-sent until a majority has it) before the claim is given up; if it
 *   cannot be, `onUnrecorded(c, …)` is called and the claim is left to expire;
 * - a streamed body (hono/streaming `stream()`, `streamText()`, `streamSSE()`): sent as it comes,
 *   the claim held until it ends, then kept like any body (over `maxBody`, or cancelled by the
 *   client: "completed without replay"); its last bytes reach the client after the record is
 *   written;
 * - a majority of nodes down: 503, handler not run.
 *
 * Keys are scoped by the caller (a SHA-256 of `Authorization` and `Cookie`, or `scope(c)`), and
 * `Set-Cookie` is never stored. Errors are `application/problem+json`.
 *
 * @throws {ConfigurationError} at construction, naming the bad option
 * @example
 * ```ts
 * app.post("/invoices/:id/charge", idempotency({ locks }), async (c) => {
 *   // c.var.lock: the claim, undefined for a request without Idempotency-Key
 *   const charge = await chargeInvoice(c.req.param("id"), { signal: c.var.lock?.signal });
 *   return c.json(charge, 201);
 * });
 * // curl -X POST -H 'Idempotency-Key: "8e03978e-40d5"' …   (a retry gets the same 201)
 * ```
 */
// biome-ignore lint/suspicious/noExplicitAny: as hono's createMiddleware: untyped apps get `any` env
export function idempotency<E extends Env = any>(
  options: IdempotencyMiddlewareOptions<E>,
): MiddlewareHandler<IdempotencyEnv<E>> {
  const resolved = resolveIdempotency(options as IdempotencyOptions<Context>, "idempotency");
  const middleware: MiddlewareHandler = async function idempotency(c, next) {
    const url = new URL(c.req.url);
    let streaming: () => void = () => undefined;
    const streamed = new Promise<"streamed">((resolve) => {
      streaming = () => resolve("streamed");
    });
    const running = runIdempotent(
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
        const headers = keptHeaders(res.headers, resolved.headers);
        const transient = await isLockProblem(res);
        const answer = { result: undefined, status, transient };
        const empty = async () => ({ status, headers, body: new Uint8Array() });
        if (status >= 500 || transient || !resolved.store(status) || res.body === null) {
          return { ...answer, capture: empty };
        }
        // The body's end waits for the record: on every runtime the request stays alive
        // until it is written, and the client sees the end only after it.
        const read = await readBody(res.body, resolved.maxBody, () => running.then(() => {}));
        if (read.kind === "whole") {
          c.res = new Response(read.bytes as Uint8Array<ArrayBuffer>, res);
          return { ...answer, capture: async () => ({ status, headers, body: read.bytes }) };
        }
        c.res = new Response(read.body, res);
        streaming();
        return { ...answer, capture: async () => ({ status, headers, body: await read.done }) };
      },
    );
    const first = await Promise.race([running, streamed]);
    if (first === "streamed") {
      // The claim is held, and the record written, while the body streams (its end waits for
      // it); on Workers the invocation is kept for it even when the client goes away.
      executionCtxOf(c)?.waitUntil(
        running.then(
          () => undefined,
          () => undefined,
        ),
      );
      return;
    }
    const outcome = first;
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
        // 204, 205 and 304 (and 1xx) have no body: the Fetch API refuses one, even empty.
        const body = NULL_BODY.has(response.status)
          ? null
          : (response.body as Uint8Array<ArrayBuffer>);
        return new Response(body, { status: response.status, headers });
      }
    }
  };
  return middleware as MiddlewareHandler<IdempotencyEnv<E>>;
}

/** Statuses whose response has no body (Fetch: a "null body status"). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * edgelock's own busy or unavailable answer (the problem+json of `lock()` inside this
 * middleware): never kept, whatever its status.
 */
async function isLockProblem(res: Response): Promise<boolean> {
  const type = res.headers.get("content-type") ?? "";
  if (!type.startsWith("application/problem+json") || res.body === null) return false;
  try {
    const problem = (await res.clone().json()) as { type?: unknown } | null;
    return typeof problem?.type === "string" && problem.type.startsWith("urn:edgelock:problem:");
  } catch {
    return false;
  }
}
