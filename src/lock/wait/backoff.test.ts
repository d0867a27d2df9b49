import { describe, expect, it } from "vitest";
import { Backoff } from "./backoff";

const top = () => 0.999999;
const bottom = () => 0;

describe("Backoff", () => {
  it("full jitter under a cap that doubles with every busy look, up to max", () => {
    const b = new Backoff(50, 1_000, top);
    b.observe(9_000, 0);
    expect(b.next(undefined)).toBe(49); // first busy look: cap = base
    b.observe(8_950, 50); // the same holder: its PTTL went down by the time that passed
    expect(b.next(undefined)).toBe(99);
    for (let i = 0; i < 10; i++) b.observe(undefined, 50);
    expect(b.cap()).toBe(1_000);
    const low = new Backoff(50, 1_000, bottom);
    low.observe(undefined, 0);
    expect(low.next(undefined)).toBe(0);
  });

  it("a PTTL that went up means a new holder: the cap stays at max / 4 while it turns over", () => {
    const b = new Backoff(50, 1_000, top);
    expect(b.observe(9_990, 0)).toBe(false);
    for (let i = 1; i <= 8; i++) expect(b.observe(9_990, i * 40)).toBe(true);
    expect(b.turnovers).toBe(8);
    expect(b.cap()).toBe(250);
    // the same holder again: back to the grown cap
    expect(b.observe(9_600, 700)).toBe(false);
    expect(b.cap()).toBe(1_000);
    // a short cap is not raised by a turnover
    const early = new Backoff(50, 1_000, top);
    early.observe(9_990, 0);
    early.observe(9_995, 30);
    expect(early.cap()).toBe(100);
  });

  it("unknown PTTLs never count as a turnover", () => {
    const b = new Backoff(50, 1_000, top);
    expect(b.observe(-1, 0)).toBe(false);
    expect(b.observe(undefined, 10)).toBe(false);
    expect(b.observe(5_000, 20)).toBe(false);
    expect(b.turnovers).toBe(0);
  });

  it("wakes just after the holders' expiry when it is within the cap, never above max", () => {
    const b = new Backoff(50, 1_000, top);
    for (let i = 0; i < 10; i++) b.observe(undefined, 0);
    expect(b.next(120)).toBe(169);
    expect(b.next(990)).toBe(1_000);
    const low = new Backoff(50, 1_000, bottom);
    low.observe(undefined, 0);
    expect(low.next(0)).toBe(0);
    // expiry beyond the cap: plain full jitter under the cap
    const first = new Backoff(50, 1_000, top);
    first.observe(5_000, 0);
    expect(first.next(5_000)).toBe(49);
    for (let i = 0; i < 200; i++) {
      const d = new Backoff(50, 1_000).next(300);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(350);
    }
  });
});
