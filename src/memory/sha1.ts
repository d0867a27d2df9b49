/**
 * SHA-1 of a script's source as hex, synchronously and on every runtime: EVAL caches a script
 * under this digest and EVALSHA looks it up, the way Redis does. A node's `eval` is synchronous
 * (the simulation calls it inside its scheduler) and WebCrypto's digest is async only, so the
 * hash is computed here; `node:crypto` would keep the node off workerd and browsers.
 *
 * @module
 */

const rotl = (x: number, n: number): number => (x << n) | (x >>> (32 - n));

/**
 * The SHA-1 digest of `text` (UTF-8) as 40 lowercase hex digits.
 *
 * @example
 * sha1("abc"); // "a9993e364706816aba3e25717850c26c9cd0d89d"
 */
export function sha1(text: string): string {
  const bytes = new TextEncoder().encode(text);
  // Message + 0x80 + zero padding + 64-bit big-endian length, to a multiple of 64 bytes.
  const length = (((bytes.length + 8) >> 6) + 1) << 6;
  const padded = new Uint8Array(length);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(length - 8, Math.floor((bytes.length * 8) / 2 ** 32));
  view.setUint32(length - 4, (bytes.length * 8) >>> 0);
  const h = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
  const w = new Uint32Array(80);
  for (let block = 0; block < length; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(block + i * 4);
    for (let i = 16; i < 80; i++) {
      w[i] = rotl(
        (w[i - 3] as number) ^ (w[i - 8] as number) ^ (w[i - 14] as number) ^ (w[i - 16] as number),
        1,
      );
    }
    let [a, b, c, d, e] = h as [number, number, number, number, number];
    for (let i = 0; i < 80; i++) {
      const [f, k] =
        i < 20
          ? [(b & c) | (~b & d), 0x5a827999]
          : i < 40
            ? [b ^ c ^ d, 0x6ed9eba1]
            : i < 60
              ? [(b & c) | (b & d) | (c & d), 0x8f1bbcdc]
              : [b ^ c ^ d, 0xca62c1d6];
      const t = (rotl(a, 5) + f + e + k + (w[i] as number)) >>> 0;
      e = d;
      d = c;
      c = rotl(b, 30) >>> 0;
      b = a;
      a = t;
    }
    h[0] = ((h[0] as number) + a) >>> 0;
    h[1] = ((h[1] as number) + b) >>> 0;
    h[2] = ((h[2] as number) + c) >>> 0;
    h[3] = ((h[3] as number) + d) >>> 0;
    h[4] = ((h[4] as number) + e) >>> 0;
  }
  return h.map((x) => x.toString(16).padStart(8, "0")).join("");
}
