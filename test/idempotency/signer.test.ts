/**
 * `signerOf`: which part of a per-request-signed `Authorization` value the default scope hashes
 * (pure parsing, no cluster).
 */
import { describe, expect, it } from "vitest";
import { signerOf } from "../../src/idempotency/digest";

describe("signerOf", () => {
  it.each([
    [
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261125/us-east-1/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc",
      "aws4-hmac-sha256 AKIDEXAMPLE",
    ],
    [
      "AWS4-ECDSA-P256-SHA256 Credential=AKIDEXAMPLE/20261125/execute-api/aws4_request, SignedHeaders=host, Signature=abc",
      "aws4-ecdsa-p256-sha256 AKIDEXAMPLE",
    ],
    [
      'Digest username="Mufasa", realm="x", nonce="dcd98b", uri="/", response="6629fa", cnonce="0a4f", nc=00000001',
      "digest Mufasa",
    ],
    [
      'Signature keyId="rsa-key-1",algorithm="rsa-sha256",headers="(request-target) date",signature="Base64=="',
      "signature rsa-key-1",
    ],
    [
      'hmac username="alice", algorithm="hmac-sha256", headers="date", signature="x="',
      "hmac alice",
    ],
  ])("%s → its signer", (header, signer) => {
    expect(signerOf(header)).toBe(signer);
  });

  it("a re-signed header has the same signer; another key id another one", () => {
    const sig = (id: string, s: string) =>
      `AWS4-HMAC-SHA256 Credential=${id}/2026112${s}/eu-west-1/s3/aws4_request, SignedHeaders=host, Signature=${s}`;
    expect(signerOf(sig("A", "5"))).toBe(signerOf(sig("A", "6")));
    expect(signerOf(sig("A", "5"))).not.toBe(signerOf(sig("B", "5")));
  });

  it.each([
    "Bearer eyJhbGciOi",
    "Basic dXNlcjpwYXNz",
    "AWS4-HMAC-SHA256 SignedHeaders=host, Signature=abc",
    'Digest realm="x", nonce="y"',
    "token",
  ])("%s: none (the whole header is hashed)", (header) => {
    expect(signerOf(header)).toBeUndefined();
  });
});
