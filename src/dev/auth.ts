/**
 * REST tokens of the dev endpoints: generation (128 random bits, hex) and a constant-time check of
 * `Authorization: Bearer <token>` or `?_token=<token>`. Both sides are hashed to SHA-256 first so the
 * comparison runs on equal-length digests and its time says nothing about the token's length or
 * prefix.
 *
 * @module
 */

import { createHash, timingSafeEqual } from "node:crypto";

/** A fresh random REST token: 16 bytes from `crypto.getRandomValues`, as 32 hex characters. */
export function createToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Buffer.from(bytes).toString("hex");
}

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

/** The credential a request presents: the Bearer token, else the `_token` query parameter. */
export function presentedToken(
  authorization: string | undefined,
  query: string,
): string | undefined {
  if (authorization !== undefined) {
    const space = authorization.indexOf(" ");
    if (space > 0 && authorization.slice(0, space).toLowerCase() === "bearer") {
      return authorization.slice(space + 1).trim();
    }
  }
  if (query !== "") return new URLSearchParams(query).get("_token") ?? undefined;
  return undefined;
}

/** Checks presented tokens against one node's token in constant time. */
export class TokenCheck {
  readonly #expected: Buffer;

  constructor(token: string) {
    this.#expected = digest(token);
  }

  /** Whether `presented` is the node's token. */
  accepts(presented: string | undefined): boolean {
    if (presented === undefined) return false;
    return timingSafeEqual(digest(presented), this.#expected);
  }
}
