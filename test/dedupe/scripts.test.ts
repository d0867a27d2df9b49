/**
 * The COMPLETE script and the ACQUIRE script's done branch, run directly on a redis-server (EVAL
 * through ioredis), so every branch is checked against real Redis semantics.
 */
import { describe, expect, it } from "vitest";
import { ACQUIRE, COMPLETE } from "../../src/scripts";
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
