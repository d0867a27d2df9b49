import { describe, expect, it } from "vitest";
import { newToken, random, sleep } from "./timing";

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

  it("sleep resolves early on abort", async () => {
    const controller = new AbortController();
    const slept = sleep(60_000, controller.signal);
    controller.abort(new Error("stop"));
    await expect(slept).resolves.toBeUndefined();
    await expect(sleep(0)).resolves.toBeUndefined();
  });

  it("sleep resolves early when the wake promise settles, either way", async () => {
    let wake: () => void = () => {};
    const woken = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const started = performance.now();
    const slept = sleep(60_000, undefined, woken);
    wake();
    await slept;
    await sleep(60_000, undefined, Promise.reject(new Error("no")));
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
