/**
 * Undoing a response's `Content-Encoding` before it is kept for replay. A `compress()` (or any
 * encoding middleware) registered after `idempotency()` encodes the body on its way out; the
 * record keeps the decoded bytes and no encoding header, so a replay is readable by any client,
 * whatever `Accept-Encoding` it sends (an outer `compress()` encodes the replay anew for it).
 *
 * @module
 */

/** Encodings `DecompressionStream` decodes on every runtime edgelock supports. */
const DECODABLE = new Set(["gzip", "x-gzip", "deflate"]);

/** The decoded body is larger than `maxBody`: kept as "completed without replay". */
export class DecodedTooLarge extends Error {
  override readonly name = "DecodedTooLarge";
}

/** The encodings of a `Content-Encoding` value, lower-case, `identity` left out. */
export function encodingsOf(header: string | null): string[] {
  if (header === null) return [];
  return header
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "" && e !== "identity");
}

/** Whether every encoding of `encodings` can be undone here. */
export const canDecode = (encodings: readonly string[]): boolean =>
  encodings.every((e) => DECODABLE.has(e));

/**
 * `bytes` with `encodings` (in the order applied) undone, read up to `maxBody` decoded bytes.
 *
 * @throws {DecodedTooLarge} past `maxBody`; the stream's error for a corrupt body
 * @example
 * const plain = await decodeBody(gzipped, ["gzip"], 65_536);
 */
export async function decodeBody(
  bytes: Uint8Array,
  encodings: readonly string[],
  maxBody: number,
): Promise<Uint8Array> {
  let data = bytes;
  for (const encoding of [...encodings].reverse()) {
    const format = encoding === "x-gzip" ? "gzip" : (encoding as "gzip" | "deflate");
    const source = new Blob([data as Uint8Array<ArrayBuffer>]).stream();
    const reader = source.pipeThrough(new DecompressionStream(format)).getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > maxBody) {
        await reader.cancel().catch(() => undefined);
        throw new DecodedTooLarge(`the decoded body is over ${maxBody} bytes`);
      }
      chunks.push(value);
    }
    data = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      data.set(chunk, at);
      at += chunk.length;
    }
  }
  return data;
}
