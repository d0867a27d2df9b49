/**
 * The COMPLETE script and the ACQUIRE script's done branch, and how COMPLETE, RELEASE (with a
 * one-shot counter lifetime) and FENCE_RAISE treat a fence counter's expiry, run directly on a
 * redis-server (EVAL through ioredis), so every branch is checked against real Redis semantics.
 */
import { describe, expect, it } from "vitest";
import { ACQUIRE, COMPLETE, FENCE_RAISE, RELEASE } from "../../src/scripts";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 1 });
const TOKEN = "0123456789abcdef0123456789abcdef";
const OTHER = "fedcba9876543210fedcba9876543210";

/** Fresh lock and fence keys. */
const keys = () => {
  const key = `t:dedupe-scripts:${crypto.randomUUID()}`;
  return [key, `${key}:fence`] as const;
};
const complete = (key: string, fence: string, token: string, retention: number) =>
  dev.direct(0).eval(COMPLETE.lua, 2, key, fence, token, String(retention));
const acquire = (key: string, fence: string, token: string, ttl: number) =>
  dev.direct(0).eval(ACQUIRE.lua, 2, key, fence, token, String(ttl), "0");

describe("COMPLETE", () => {
  it("our token → 1: replaced by done:<token> with PX retention", async () => {
    const [key, fence] = keys();
    await dev.direct(0).set(key, TOKEN, "PX", 5_000);
    expect(await complete(key, fence, TOKEN, 60_000)).toBe(1);
    expect(await dev.direct(0).get(key)).toBe(`done:${TOKEN}`);
    const pttl = await dev.direct(0).pttl(key);
    expect(pttl).toBeGreaterThan(55_000);
    expect(pttl).toBeLessThanOrEqual(60_000);
  });

  it("absent (our grant expired, the job finished) → 1: the marker is written", async () => {
    const [key, fence] = keys();
    expect(await complete(key, fence, TOKEN, 60_000)).toBe(1);
    expect(await dev.direct(0).get(key)).toBe(`done:${TOKEN}`);
  });

  it("already done → 2, marker and its TTL untouched (a re-sent request is harmless)", async () => {
    const [key, fence] = keys();
    await dev.direct(0).set(key, `done:${OTHER}`, "PX", 30_000);
    expect(await complete(key, fence, TOKEN, 60_000)).toBe(2);
    expect(await dev.direct(0).get(key)).toBe(`done:${OTHER}`);
    expect(await dev.direct(0).pttl(key)).toBeLessThanOrEqual(30_000);
  });

  it("another holder → 0, left alone", async () => {
    const [key, fence] = keys();
    await dev.direct(0).set(key, OTHER, "PX", 5_000);
    expect(await complete(key, fence, TOKEN, 60_000)).toBe(0);
    expect(await dev.direct(0).get(key)).toBe(OTHER);
    expect(await dev.direct(0).pttl(key)).toBeLessThanOrEqual(5_000);
  });
});

describe("ACQUIRE on a done marker", () => {
  it("answers {2, pttl} and leaves the marker alone", async () => {
    const [key, fence] = keys();
    await dev.direct(0).set(key, `done:${OTHER}`, "PX", 40_000);
    const reply = await acquire(key, fence, TOKEN, 5_000);
    const parsed = ACQUIRE.parse(reply);
    expect(parsed).toMatchObject({ granted: false, done: true });
    expect(parsed?.granted === false && parsed.pttl).toBeGreaterThan(35_000);
    expect(await dev.direct(0).get(key)).toBe(`done:${OTHER}`);
  });

  it("a marker without expiry answers {2, -1}", async () => {
    const [key, fence] = keys();
    await dev.direct(0).set(key, `done:${OTHER}`);
    expect(ACQUIRE.parse(await acquire(key, fence, TOKEN, 5_000))).toEqual({
      granted: false,
      done: true,
      pttl: -1,
    });
  });

  it("a plain holder still answers {0, pttl}", async () => {
    const [key, fence] = keys();
    await dev.direct(0).set(key, OTHER, "PX", 5_000);
    expect(ACQUIRE.parse(await acquire(key, fence, TOKEN, 5_000))).toMatchObject({
      granted: false,
    });
    expect(ACQUIRE.parse(await acquire(key, fence, TOKEN, 5_000))).not.toHaveProperty("done");
  });
});

describe("a one-shot key's fence counter", () => {
  const direct = () => dev.direct(0);
  const counterPttl = (fence: string) => direct().pttl(fence);

  it("COMPLETE gives a counter without expiry the marker's retention (our token, absent, marker)", async () => {
    for (const before of [TOKEN, null, `done:${OTHER}`]) {
      const [key, fence] = keys();
      if (before !== null) await direct().set(key, before, "PX", 5_000);
      await direct().set(fence, "7");
      expect(await complete(key, fence, TOKEN, 60_000)).toBe(before === `done:${OTHER}` ? 2 : 1);
      const pttl = await counterPttl(fence);
      expect(pttl).toBeGreaterThan(55_000);
      expect(pttl).toBeLessThanOrEqual(60_000);
      expect(await direct().get(fence)).toBe("7");
    }
  });

  it("COMPLETE never shortens a counter's expiry, and leaves another holder's counter alone", async () => {
    const [key, fence] = keys();
    await direct().set(fence, "3", "PX", 120_000);
    await complete(key, fence, TOKEN, 60_000);
    expect(await counterPttl(fence)).toBeGreaterThan(115_000);
    const [held, heldFence] = keys();
    await direct().set(held, OTHER, "PX", 5_000);
    await direct().set(heldFence, "3");
    expect(await complete(held, heldFence, TOKEN, 60_000)).toBe(0);
    expect(await counterPttl(heldFence)).toBe(-1);
  });

  const release = (key: string, fence: string, token: string, counterMs?: number) =>
    direct().eval(
      RELEASE.lua,
      3,
      key,
      fence,
      `${key}:wait`,
      token,
      "",
      ...(counterMs === undefined ? [] : [String(counterMs)]),
    );

  it("RELEASE with a counter lifetime: our token or absent → the counter expires; else untouched", async () => {
    const [key, fence] = keys();
    await direct().set(key, TOKEN, "PX", 5_000);
    await direct().set(fence, "4");
    expect(await release(key, fence, TOKEN, 30_000)).toBe(1);
    expect(await direct().get(key)).toBeNull();
    expect(await counterPttl(fence)).toBeGreaterThan(25_000);
    const [gone, goneFence] = keys();
    await direct().set(goneFence, "4");
    expect(await release(gone, goneFence, TOKEN, 30_000)).toBe(0);
    expect(await counterPttl(goneFence)).toBeGreaterThan(25_000);
    const [held, heldFence] = keys();
    await direct().set(held, OTHER, "PX", 5_000);
    await direct().set(heldFence, "4");
    expect(await release(held, heldFence, TOKEN, 30_000)).toBe(-1);
    expect(await counterPttl(heldFence)).toBe(-1);
  });

  it("RELEASE without one (a plain lock) leaves the counter without expiry", async () => {
    const [key, fence] = keys();
    await direct().set(key, TOKEN, "PX", 5_000);
    await direct().set(fence, "4");
    expect(await release(key, fence, TOKEN)).toBe(1);
    expect(await counterPttl(fence)).toBe(-1);
  });

  const raise = (key: string, fence: string, target: number, token: string) =>
    direct().eval(FENCE_RAISE.lua, 2, key, fence, String(target), token);

  it("FENCE_RAISE that counts keeps the counter for the new grant (its expiry removed)", async () => {
    for (const target of [2, 9]) {
      const [key, fence] = keys();
      await direct().set(key, TOKEN, "PX", 5_000);
      await direct().set(fence, "5", "PX", 30_000);
      expect(await raise(key, fence, target, TOKEN)).toEqual([1, Math.max(5, target)]);
      expect(await counterPttl(fence)).toBe(-1);
    }
  });

  it("FENCE_RAISE creating a counter beside a done marker makes it expire with the marker", async () => {
    const [key, fence] = keys();
    await direct().set(key, `done:${TOKEN}`, "PX", 30_000);
    expect(await raise(key, fence, 3, TOKEN)).toEqual([0, 3]);
    expect(await direct().get(fence)).toBe("3");
    const pttl = await counterPttl(fence);
    expect(pttl).toBeGreaterThan(25_000);
    expect(pttl).toBeLessThanOrEqual(30_000);
  });

  it("FENCE_RAISE that does not count keeps the counter's expiry, raised or not", async () => {
    for (const target of [2, 9]) {
      const [key, fence] = keys();
      await direct().set(key, `done:${OTHER}`, "PX", 30_000);
      await direct().set(fence, "5", "PX", 30_000);
      expect(await raise(key, fence, target, TOKEN)).toEqual([0, Math.max(5, target)]);
      expect(await counterPttl(fence)).toBeGreaterThan(25_000);
    }
  });
});
