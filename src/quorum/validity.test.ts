import { describe, expect, it } from "vitest";
import { defaultRequestTimeout } from "./timeout";
import { bestValidity, drift, freeAfter, isValidGrant, quorumOf, validity } from "./validity";

describe("validity math", () => {
  it.each([
    [1, 1],
    [2, 2],
    [3, 2],
    [4, 3],
    [5, 3],
    [7, 4],
  ])("quorum of %i nodes is %i", (n, q) => {
    expect(quorumOf(n)).toBe(q);
  });

  it.each([
    // ttl, driftFactor, drift
    [10_000, 0.01, 102],
    [300, 0.01, 5],
    [1_000, 0, 2],
    [333, 0.01, 6], // 3.33 rounds up
  ])("drift(%i, %f) = %i", (ttl, factor, expected) => {
    expect(drift(ttl, factor)).toBe(expected);
  });

  it("validity = ttl − elapsed − (ttl·driftFactor + 2)", () => {
    expect(validity(10_000, 40, 0.01)).toBe(9_858);
    expect(validity(300, 0, 0.01)).toBe(295);
    expect(validity(300, 400, 0.01)).toBe(-105);
    expect(bestValidity(10_000, 0.01)).toBe(9_898);
  });

  it("a grant below minValidity (or not positive) is refused", () => {
    expect(isValidGrant(50, 10)).toBe(true);
    expect(isValidGrant(10, 10)).toBe(true);
    expect(isValidGrant(9.9, 10)).toBe(false);
    expect(isValidGrant(0, 0)).toBe(false);
    expect(isValidGrant(-5, 0)).toBe(false);
  });

  it("freeAfter: when a majority can be free", () => {
    expect(freeAfter([300, 100, 200], 0, 2)).toBe(200);
    expect(freeAfter([300], 2, 3)).toBe(300);
    expect(freeAfter([], 3, 3)).toBe(0);
    // a holder without TTL (-1) never frees up; failures are not holders
    expect(freeAfter([-1, 500], 1, 3)).toBeUndefined();
    expect(freeAfter([500], 0, 3)).toBeUndefined();
  });

  it.each([
    [10_000, 500],
    [300, 100],
    [100, 33],
    [60_000, 3_000],
    [2, 1],
  ])("default request timeout for lease %i is %i", (lease, timeout) => {
    expect(defaultRequestTimeout(lease)).toBe(timeout);
  });
});
