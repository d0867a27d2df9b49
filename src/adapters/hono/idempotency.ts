import type { Context, Env, MiddlewareHandler } from "hono";
import { ConfigurationError, isPlainObject } from "../../errors";
import {
  type IdempotencyOptions,
  keptHeaders,
  REPLAYED,
  resolveIdempotency,
  runIdempotent,
} from "../../idempotency";
import type { Lock } from "../../lock";
import { readBody } from "./captured-body";
import { defaultBudget, executionCtxOf } from "./context";
import { canDecode, decodeBody, encodingsOf } from "./decoded-body";
import { isLockAnswer } from "./transient";

/**
 * Options of {@link idempotency}: see `IdempotencyOptions` (`locks`, `methods`, `required`, `ttl`,
 * `lease`, `wait`, `maxBody`, `headers`, `scope`, `fingerprint`, `budget`, `store`,
 * `onUnrecorded`, `onUnavailable`), each a function of the request's `Context` where it is one, and
 * `replayStreams`.
 */
// biome-ignore lint/suspicious/noExplicitAny: as hono's createMiddleware: untyped apps get `any` env
export type IdempotencyMiddlewareOptions<E extends Env = any> = IdempotencyOptions<Context<E>> & {
  /**
   * Keep a streamed body (one still being written when the handler returns) for replay. Off, a
   * streamed answer is kept as "completed without replay" (a retry gets 409, never a second
   * run): hono/streaming's `stream()`, `streamText()` and `streamSSE()` end the stream normally
   * even when their callback throws, so a truncated body cannot be told from a whole one. Set it
   * only when a failed stream of this route errors its body (a `ReadableStream` you error).
   * @default false
   */
  readonly replayStreams?: boolean;
};

/**
 * Variables the middleware sets: `c.var.idempotencyClaim` is the claim held while the handler
 * runs (honour its `signal`), and `undefined` for a request the middleware passes through (no
 * `Idempotency-Key` without `required`, or a method not in `methods`). It leaves `c.var.lock`
 * alone: that stays the lock of a `lock()` middleware, if any.
 */
export type IdempotencyVariables = { idempotencyClaim: Lock | undefined };

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
 *   400); a key that is neither 1–255 printable ASCII characters without `"` (bare, as most
 *   clients send it) nor the draft's quoted structured-field string of such: 400;
 * - first request: claims the key with a quorum lock (TTL from the budget, auto-extended; the
 *   claim is `c.var.idempotencyClaim`: honour its `signal`), runs the handler, keeps status, the allow-listed
 *   headers and the body on the nodes;
 * - same key and fingerprint, completed: the stored response, handler not run;
 * - same key while the first runs: 409 with `Retry-After: 1` (`retryAfter`), or wait up to
 *   `wait` ms;
 * - same key, another fingerprint (method, path, body): 422;
 * - the handler answers 5xx, throws, loses its claim, or answers what `store` does not keep
 *   (by default 408, 409, 425, 429, and any busy/unavailable answer of a `lock()` inside): nothing kept,
 *   claim released (a retry runs again); a body over `maxBody`: kept as "completed without
 *   replay" (a retry gets 409);
 * - the record is written (re-sent until a majority has it) before the claim is given up; if it
 *   cannot be, `onUnrecorded(c, …)` is called and the claim is left to expire;
 * - a streamed body (hono/streaming `stream()`, `streamText()`, `streamSSE()`): sent as it comes,
 *   the claim held until it ends, then kept as "completed without replay" (with `replayStreams`,
 *   like any body unless over `maxBody`, failed or cancelled); its last bytes reach the client
 *   after the record is written;
 * - an encoded body (`compress()` after this middleware): gzip and deflate are kept decoded,
 *   without `Content-Encoding`; another encoding is kept with its `Content-Encoding` and `Vary`;
 * - a majority of nodes down: 503 with a generic `detail` (the nodes' answers with
 *   `exposeDetails: true`), handler not run, and one `console.error` line naming the route (no
 *   query), the claim's hashed key and the cause, unless `onUnavailable(c, info)` is given;
 * - every node's answer to the record's COMPLETE (or the release) is awaited before the answer
 *   goes out, or on Workers kept alive with `c.executionCtx.waitUntil`.
 *
 * Keys are scoped by the caller: by default a SHA-256 of the credential headers (`scopeHeaders`)
 * and session cookies (`scopeCookies`) present — other cookies do not count — or, with neither
 * but other cookies, of the whole `Cookie` header (a signed `Authorization` — SigV4, Digest, HTTP
 * Signatures — by its key id or user), and of the request's host; `scope(c)` replaces it. `Set-Cookie` is never
 * stored. Errors are `application/problem+json`.
 *
 * @throws {ConfigurationError} at construction, naming the bad option
 * @example
 * ```ts
 * app.post("/invoices/:id/charge", idempotency({ locks }), async (c) => {
 *   // The claim, undefined for a request without Idempotency-Key
 *   const charge = await chargeInvoice(c.req.param("id"), { signal: c.var.idempotencyClaim?.signal });
 *   return c.json(charge, 201);
 * });
 * // curl -X POST -H 'Idempotency-Key: 8e03978e-40d5' …   (a retry gets the same 201)
 * ```
 */
// biome-ignore lint/suspicious/noExplicitAny: as hono's createMiddleware: untyped apps get `any` env
export function idempotency<E extends Env = any>(
  options: IdempotencyMiddlewareOptions<E>,
): MiddlewareHandler<IdempotencyEnv<E>> {
  // Before taking `replayStreams` out: null, a number or an array is refused as `options`, not
  // read as no options (the other names are checked with the shared ones).
  if (!isPlainObject(options)) {
    throw new ConfigurationError("options", "idempotency() expects an options object { locks }");
  }
  const { replayStreams = false, ...shared } = options;
  if (typeof replayStreams !== "boolean") {
    throw new ConfigurationError("replayStreams", "expected a boolean");
  }
  const resolved = resolveIdempotency(shared as IdempotencyOptions<Context>, "idempotency");
  const middleware: MiddlewareHandler = async function idempotency(c, next) {
    const url = new URL(c.req.url);
    const ctx = executionCtxOf(c);
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
        host: url.host,
        header: (name) => c.req.header(name),
        // A copy: the request's own body stays unread for every reader (c.req.raw.text(),
        // c.req.json(), parseBody(), …). One an earlier middleware read is in hono's cache.
        body: async () =>
          new Uint8Array(
            await (c.req.raw.bodyUsed ? c.req.arrayBuffer() : c.req.raw.clone().arrayBuffer()),
          ),
        budget: defaultBudget(c),
        waitUntil: ctx === undefined ? undefined : (settled) => ctx.waitUntil(settled),
      },
      async (lock) => {
        c.set("idempotencyClaim", lock);
        await next();
        const res = c.res;
        // hono's compose turned a thrown error into c.error and an error response.
        const status = c.error === undefined ? res.status : Math.max(res.status, 500);
        const encodings = encodingsOf(res.headers.get("content-encoding"));
        const decode = encodings.length > 0 && canDecode(encodings);
        // An encoding we cannot undo is kept, labelled as it was sent.
        const allow =
          encodings.length > 0 && !decode
            ? new Set([...resolved.headers, "content-encoding", "vary"])
            : resolved.headers;
        const headers = keptHeaders(res.headers, allow);
        const transient = isLockAnswer(c) || (await isLockProblem(res));
        const answer = { result: undefined, status, transient };
        const empty = async () => ({ status, headers, body: new Uint8Array() });
        if (status >= 500 || transient || !resolved.store(status) || res.body === null) {
          return { ...answer, capture: empty };
        }
        const stored = async (bytes: Uint8Array) => ({
          status,
          headers,
          body: decode ? await decodeBody(bytes, encodings, resolved.maxBody) : bytes,
        });
        // The body's end waits for the record: on every runtime the request stays alive
        // until it is written, and the client sees the end only after it.
        const read = await readBody(res.body, resolved.maxBody, () => running.then(() => {}));
        if (read.kind === "whole") {
          c.res = new Response(read.bytes as Uint8Array<ArrayBuffer>, res);
          // Declared a stream (streamText(), streamSSE()) but ended at once: as a streamed body.
          const capture = () =>
            declaresStream(res.headers) && !replayStreams
              ? Promise.reject(new Error("a streamed body is kept without replay"))
              : stored(read.bytes);
          return { ...answer, capture };
        }
        c.res = new Response(read.body, res);
        streaming();
        const capture = async () => {
          const bytes = await read.done;
          // A streaming helper's callback that threw ended the body normally: unless the app
          // says its streams fail loudly, the end proves nothing (kept without replay).
          if (!replayStreams) throw new Error("a streamed body is kept without replay");
          return stored(bytes);
        };
        return { ...answer, capture };
      },
    );
    const first = await Promise.race([running, streamed]);
    if (first === "streamed") {
      // The claim is held, and the record written, while the body streams (its end waits for
      // it); on Workers the invocation is kept for it even when the client goes away.
      ctx?.waitUntil(
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

/**
 * A response that says it is a stream: `text/event-stream` (`streamSSE()`) or an explicit
 * `Transfer-Encoding: chunked` (`streamText()`, `streamSSE()`).
 */
function declaresStream(headers: Headers): boolean {
  const type = headers.get("content-type")?.toLowerCase() ?? "";
  const transfer = headers.get("transfer-encoding")?.toLowerCase() ?? "";
  return type.startsWith("text/event-stream") || transfer.includes("chunked");
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
