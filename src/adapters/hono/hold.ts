/**
 * What `lock()` and `limit()` do once they hold their lock or permit: run the rest of the chain
 * under it, and release it (every node's answer awaited) only after the response ended, body
 * included (docs/SAFETY.md §6c H1, H2).
 *
 * @module
 */
import type { Context, Next } from "hono";
import type { ReleaseOptions } from "../../lock";
import { untilBodyEnds } from "./body";
import { executionCtxOf } from "./context";

/** What is held: a `Lock`, or a semaphore's `Permit`. */
export interface Held {
  release(options?: ReleaseOptions): Promise<unknown>;
}

/**
 * Release `held` now: through `c.executionCtx.waitUntil` when there is an execution context
 * (Workers: nothing awaits it), else the promise to await (Node, Lambda).
 *
 * @example
 * if (fencing && held.fence === undefined) { await releaseNow(c, held); throw … }
 */
export function releaseNow(c: Context, held: Held): Promise<unknown> | undefined {
  // Every node's answer, not only a majority's: the invocation may end (waitUntil) or freeze
  // (Lambda) once this settles, and a request cut off then leaves the key until its TTL.
  const released = held.release({ settled: true });
  const ctx = executionCtxOf(c);
  if (ctx === undefined) return released;
  ctx.waitUntil(released);
  return undefined;
}

/**
 * The release at the body's end. On Workers the `waitUntil` is registered now, while the
 * handler's request is surely live, and settles with the release started at the end.
 */
function releaseAtBodyEnd(c: Context, held: Held): () => Promise<unknown> | undefined {
  const ctx = executionCtxOf(c);
  if (ctx === undefined) return () => held.release({ settled: true });
  let settle: (released: Promise<unknown>) => void = () => undefined;
  ctx.waitUntil(new Promise<unknown>((resolve) => (settle = resolve)));
  return () => {
    settle(held.release({ settled: true }));
    return undefined;
  };
}

/**
 * Run `next()` holding `held`, and release it once the response is over: at once for a thrown
 * `next()`, a response without a body, or a HEAD (its body is cancelled first); at the body's end
 * otherwise (`untilBodyEnds`), so a streamed body keeps it until its producer is done, the client
 * went away, or nobody read it within `unreadBodyTimeout`. Without an execution context, a body
 * complete at return is answered only after its release settled.
 *
 * @example
 * c.set("lock", held);
 * await holdThroughResponse(c, next, held, unreadBodyTimeout);
 */
export async function holdThroughResponse(
  c: Context,
  next: Next,
  held: Held,
  unreadBodyTimeout: number,
): Promise<void> {
  try {
    // hono's compose catches the handler's errors (into c.error), so this rarely throws.
    await next();
  } catch (error) {
    await releaseNow(c, held);
    throw error;
  }
  const { body } = c.res;
  // A body someone already reads (locked) cannot be watched: nothing of ours will see its end.
  if (body === null || body.locked || c.req.method === "HEAD") {
    // HEAD: hono answers with the headers only and drops the body, which nobody would read to
    // its end: stop its producer, and release now.
    if (body !== null && !body.locked) await body.cancel().catch(() => undefined);
    await releaseNow(c, held);
    return;
  }
  // The body may still be being produced (a stream): the protected work lasts until it ends.
  const watched = untilBodyEnds(body, releaseAtBodyEnd(c, held), unreadBodyTimeout);
  c.res = new Response(watched.stream, c.res);
  if (executionCtxOf(c) !== undefined) return;
  // Without waitUntil, a body that is complete already (text, JSON, bytes: read to its end
  // within a turn of the event loop) is answered once its release settled, as a response
  // without a body is: the next request of the same client finds the key free, and Lambda
  // freezes nothing in flight. A streamed body is answered at once.
  const complete = await Promise.race([
    watched.reached.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(resolve, 0, false)),
  ]);
  if (complete) await watched.ended;
}
