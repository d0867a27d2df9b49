/**
 * Reading a Hono response's body for the idempotency record without holding back a streamed one.
 * A body that is complete when the handler returns (`c.json`, `c.text`, `c.body`) is read whole at
 * once; one that is still being produced then (`stream()`, `streamText()`, `streamSSE()` of
 * hono/streaming, or any `ReadableStream` written later) is passed to the client as it comes and
 * copied on the way, up to `maxBody` bytes, until it ends.
 *
 * @module
 */

/** What {@link readBody} found. */
export type ReadBody =
  | { readonly kind: "whole"; readonly bytes: Uint8Array }
  | {
      readonly kind: "streamed";
      /** The body to send instead: the same bytes, copied on the way. */
      readonly body: ReadableStream<Uint8Array>;
      /**
       * The whole body once the client read it to its end; rejects when it was cancelled or
       * failed, or when it grew over `maxBody` (then only its status is kept).
       */
      readonly done: Promise<Uint8Array>;
    };

/** Larger than `maxBody`: kept as "completed without replay". */
class BodyTooLarge extends Error {
  override readonly name = "BodyTooLarge";
}

/** Resolves after the current task and every job it queued (a macrotask). */
const nextTask = () => new Promise<"later">((resolve) => setTimeout(() => resolve("later"), 0));

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

/**
 * Read what `body` already holds. Whole when its end comes before the next macrotask (a body the
 * handler built in memory) within `maxBody` bytes; otherwise streamed: the returned body replays what was read, then
 * forwards the rest, and `finish(bytes)` runs before its end is passed on (the record is written
 * before the client sees the response end), or `finish(error)` when the client cancels it.
 *
 * @example
 * const read = await readBody(res.body, 65_536, async () => { await recorded; });
 */
export async function readBody(
  body: ReadableStream<Uint8Array>,
  maxBody: number,
  finish: () => Promise<void>,
): Promise<ReadBody> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  for (;;) {
    const read = reader.read();
    const first = await Promise.race([read, nextTask()]);
    if (first === "later") {
      pending = read;
      break;
    }
    if (first.done) return { kind: "whole", bytes: concat(chunks) };
    chunks.push(first.value);
    size += first.value.length;
    // Over maxBody it is kept without its body anyway: stream the rest rather than hold it.
    if (size > maxBody) break;
  }
  let resolveDone!: (bytes: Uint8Array) => void;
  let rejectDone!: (error: unknown) => void;
  const done = new Promise<Uint8Array>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  // Nobody may await it (a claim lost before the end): never an unhandled rejection.
  done.catch(() => undefined);
  const queued = [...chunks];
  let over = size > maxBody;
  const keep = (chunk: Uint8Array) => {
    size += chunk.length;
    if (size > maxBody) over = true;
    else chunks.push(chunk);
  };
  const streamed = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const early = queued.shift();
      if (early !== undefined) {
        controller.enqueue(early);
        return;
      }
      try {
        const next = await (pending ?? reader.read());
        pending = undefined;
        if (!next.done) {
          keep(next.value);
          controller.enqueue(next.value);
          return;
        }
      } catch (error) {
        rejectDone(error);
        await finish().catch(() => undefined);
        controller.error(error);
        return;
      }
      if (over) rejectDone(new BodyTooLarge(`the streamed body is over ${maxBody} bytes`));
      else resolveDone(concat(chunks));
      await finish().catch(() => undefined);
      controller.close();
    },
    async cancel(reason) {
      rejectDone(reason ?? new Error("the client cancelled the body"));
      await reader.cancel(reason).catch(() => undefined);
      await finish().catch(() => undefined);
    },
  });
  return { kind: "streamed", body: streamed, done };
}
