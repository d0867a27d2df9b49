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
 * `body`, passed through unchanged, calling `end()` exactly once when it has ended: its producer
 * closed it (all chunks read), it errored, or its reader cancelled it (a client that went away).
 * The end is passed on only after `end()`'s promise settles, so a runtime that stops when the
 * response is complete (AWS Lambda) has let `end()` finish by then; `end()` returning nothing
 * passes it on at once (Workers: the release goes to `waitUntil`).
 *
 * @param body - the response body to watch (it is locked to this stream from now on)
 * @param end - called once at the body's end; may return a promise to wait for
 * @returns the stream to answer with, and when its end was reached and `end()` settled
 * @example
 * const watched = untilBodyEnds(c.res.body, () => releaseSettled(lock));
 * c.res = new Response(watched.stream, c.res);
 */
export function untilBodyEnds(
  body: ReadableStream<Uint8Array>,
  end: () => Promise<unknown> | undefined,
): WatchedBody {
  const reader = body.getReader();
  let cancelled = false;
  let reach: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  // One end, whichever path sees it first (a cancel also ends a read-ahead in flight); every path
  // waits for it. end() never throws into the body (it is the middleware's release, which never
  // rejects anyway).
  let ending: Promise<unknown> | undefined;
  const finish = () => {
    if (ending === undefined) {
      reach();
      ending = Promise.resolve()
        .then(end)
        .catch(() => undefined);
    }
    return ending;
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          await finish();
          if (!cancelled) controller.error(error);
          return;
        }
        if (chunk.done) {
          await finish();
          if (!cancelled) controller.close();
          return;
        }
        controller.enqueue(chunk.value);
      },
      async cancel(reason) {
        cancelled = true;
        try {
          await reader.cancel(reason);
        } finally {
          await finish();
        }
      },
    },
    { highWaterMark: READ_AHEAD },
  );
  return { stream, reached, ended: reached.then(() => ending) };
}
