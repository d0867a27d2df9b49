/**
 * A response body that tells when it has ended: the `lock()` middleware holds its lock until then.
 *
 * @module
 */

/**
 * Chunks read ahead of the client: two, so that a body that is already complete when the handler
 * returns (a string, bytes, JSON: one chunk, then the end) is read to its end at once — its lock
 * is released right after the handler, whether or not anyone reads the body — while a streamed
 * body is read no further ahead of its client than that (backpressure reaches the producer).
 */
const READ_AHEAD = 2;

/**
 * How long a streamed body may wait for its first read, in ms, before it is cancelled: 5 s. Every
 * runtime starts reading a returned response at once (Node's server, Workers, Bun, Deno, hono's
 * Lambda adapters), so only a body nobody will ever read waits that long — one an outer middleware
 * replaced (`c.res = …` after `await next()`), or `app.request()` in a test that never reads it.
 *
 * @example
 * untilBodyEnds(body, release, options.unreadBodyTimeout ?? UNREAD_BODY_MS);
 */
export const UNREAD_BODY_MS = 5_000;

/** The watched body of {@link untilBodyEnds}. */
export interface WatchedBody {
  /** The stream to answer with in place of the original body. */
  readonly stream: ReadableStream<Uint8Array>;
  /** Resolves once the body's end was seen (before `end()` settled). */
  readonly reached: Promise<void>;
  /** Resolves once `end()` settled. */
  readonly ended: Promise<unknown>;
}

/**
 * Why a body nobody started reading was cancelled: its producer's cancel reason, and the error a
 * late reader of the answered stream gets (`name`: `"UnreadBodyError"`).
 *
 * @param ms - the bound that passed without a read
 * @example
 * controller.error(unreadBodyError(5_000));
 */
export function unreadBodyError(ms: number): Error {
  const error = new Error(`the response body was not read within ${ms} ms: cancelled`);
  error.name = "UnreadBodyError";
  return error;
}

/**
 * `body`, passed through unchanged, calling `end()` exactly once when it has ended: its producer
 * closed it (all chunks read), it errored, or its reader cancelled it (a client that went away).
 * The end is passed on only after `end()`'s promise settles, so a runtime that stops when the
 * response is complete (AWS Lambda) has let `end()` finish by then; `end()` returning nothing
 * passes it on at once (Workers: the release goes to `waitUntil`).
 *
 * The returned stream buffers nothing itself (high-water mark 0): the read-ahead is done here,
 * so that its `pull` is exactly a consumer's read. A body that has not ended and that no consumer
 * started reading within `unreadMs` is cancelled as a client's cancel would (its producer is
 * told), `end()` is called, and a late reader gets an error, never a silently truncated body.
 *
 * @param body - the response body to watch (it is locked to this stream from now on)
 * @param end - called once at the body's end; may return a promise to wait for
 * @param [unreadMs=UNREAD_BODY_MS] - how long a body may wait for its first read
 * @returns the stream to answer with, and when its end was reached and `end()` settled
 * @example
 * const watched = untilBodyEnds(c.res.body, () => lock.release({ settled: true }));
 * c.res = new Response(watched.stream, c.res);
 */
export function untilBodyEnds(
  body: ReadableStream<Uint8Array>,
  end: () => Promise<unknown> | undefined,
  unreadMs: number = UNREAD_BODY_MS,
): WatchedBody {
  const reader = body.getReader();
  let reach: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  // One end, whichever path sees it first (a cancel also ends a read-ahead in flight); every path
  // waits for it. end() never throws into the body (it is the middleware's release, which never
  // rejects anyway).
  let ending: Promise<unknown> | undefined;
  const finish = () => {
    if (ending === undefined) {
      clearTimeout(unread);
      reach();
      ending = Promise.resolve()
        .then(end)
        .catch(() => undefined);
    }
    return ending;
  };

  const queue: Uint8Array[] = [];
  /** The source's end once read: closed, or errored with `error`. */
  let outcome: { readonly error?: unknown; readonly failed: boolean } | undefined;
  let reading = false;
  let cancelled = false;
  /** A consumer's read waiting for the read-ahead. */
  let wake: (() => void) | undefined;
  const notify = () => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  const readAhead = () => {
    if (reading || outcome !== undefined || cancelled || queue.length >= READ_AHEAD) return;
    reading = true;
    reader.read().then(
      (chunk) => {
        reading = false;
        if (chunk.done) {
          outcome = { failed: false };
          void finish();
        } else {
          queue.push(chunk.value);
          readAhead();
        }
        notify();
      },
      (error: unknown) => {
        reading = false;
        outcome = { error, failed: true };
        void finish();
        notify();
      },
    );
  };

  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let started = false;
  const unread = setTimeout(() => {
    if (started || ending !== undefined) return;
    cancelled = true;
    const reason = unreadBodyError(unreadMs);
    controller.error(reason);
    void reader.cancel(reason).catch(() => undefined);
    void finish();
  }, unreadMs);

  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      async pull(c) {
        started = true;
        clearTimeout(unread);
        for (;;) {
          if (cancelled) return;
          const chunk = queue.shift();
          if (chunk !== undefined) {
            c.enqueue(chunk);
            readAhead();
            return;
          }
          if (outcome !== undefined) {
            await finish();
            if (cancelled) return;
            if (outcome.failed) c.error(outcome.error);
            else c.close();
            return;
          }
          readAhead();
          await new Promise<void>((resolve) => (wake = resolve));
        }
      },
      async cancel(reason) {
        cancelled = true;
        notify();
        try {
          await reader.cancel(reason);
        } finally {
          await finish();
        }
      },
    },
    { highWaterMark: 0 },
  );
  readAhead();
  return { stream, reached, ended: reached.then(() => ending) };
}
