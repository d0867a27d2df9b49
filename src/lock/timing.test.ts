import { describe, expect, it } from "vitest";
import { newToken, random, retryDelay, sleep } from "./timing";

describe("timing", () => {
  it("tokens are 128-bit hex and unique", () => {
    const tokens = new Set(Array.from({ length: 1_000 }, newToken));
    expect(tokens.size).toBe(1_000);
    for (const token of tokens) expect(token).toMatch(/^[0-9a-f]{32}$/);
  });

  it("random() is in [0, 1)", () => {
    for (let i = 0; i < 1_000; i++) {
      const r = random();
      expect(r).toBeGreaterThanOrEqual(0);
      expect(r).toBeLessThan(1);
    }
  });

  it("retryDelay: full jitter under the exponential cap", () => {
    const top = () => 0.999999;
    expect(retryDelay(0, undefined, 50, 1_000, top)).toBe(49);
    expect(retryDelay(2, undefined, 50, 1_000, top)).toBe(199);
    expect(retryDelay(10, undefined, 50, 1_000, top)).toBe(999);
    expect(retryDelay(3, undefined, 50, 1_000, () => 0)).toBe(0);
  });

  it("retryDelay wakes just after the holders' expiry when it is within the cap", () => {
    const top = () => 0.999999;
    expect(retryDelay(10, 120, 50, 1_000, top)).toBe(169);
    expect(retryDelay(10, 120, 50, 1_000, () => 0)).toBe(120);
    expect(retryDelay(10, 0, 50, 1_000, () => 0)).toBe(0);
    expect(retryDelay(10, 990, 50, 1_000, top)).toBe(1_000); // never above retryDelayMax
    // expiry beyond the cap: plain full jitter under the cap
    expect(retryDelay(0, 5_000, 50, 1_000, top)).toBe(49);
    for (let i = 0; i < 200; i++) {
      const d = retryDelay(i % 12, 300, 50, 1_000);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(350);
    }
  });

  it("sleep resolves early on abort", async () => {
    const controller = new AbortController();
    const slept = sleep(60_000, controller.signal);
    controller.abort(new Error("stop"));
    await expect(slept).resolves.toBeUndefined();
    await expect(sleep(0)).resolves.toBeUndefined();
  });
});
