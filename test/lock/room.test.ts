/**
 * What the scripts keep (docs/SAFETY.md §2), on a real redis-server: E1
 * (expiries never go down) and F2 (a fence raise counts only where the key is ours or absent).
 * The queue's service on RELEASE and HANDOVER is test/scripts/queue-scripts.test.ts's.
 */
import { describe, expect, it } from "vitest";
import { ACQUIRE, EXTEND, FENCE_RAISE, HANDOVER } from "../../src/scripts";
import { useDevCluster } from "../support/dev-cluster";
import { uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 1 });

const keysOf = (name: string): [string, string, string] => {
  const key = `${uniquePrefix(name)}k`;
  return [key, `${key}:fence`, `${key}:wait`];
};
const run = (script: { lua: string }, keys: string[], args: string[]) =>
  dev.direct(0).eval(script.lua, keys.length, ...keys, ...args);
const redis = () => dev.direct(0);

describe("E1: a token's expiry never goes down", () => {
  it("EXTEND raises a shorter TTL and leaves a longer one alone", async () => {
    const keys = keysOf("e1");
    await redis().set(keys[0], "t", "PX", 10_000);
    expect(await run(EXTEND, keys, ["t", "1000"])).toBe(1);
    expect(await redis().pttl(keys[0])).toBeGreaterThan(9_000);
    expect(await run(EXTEND, keys, ["t", "30000"])).toBe(1);
    expect(await redis().pttl(keys[0])).toBeGreaterThan(29_000);
  });

  it("a re-sent ACQUIRE or HANDOVER that finds its own token never shortens it", async () => {
    const keys = keysOf("e1-resend");
    await redis().set(keys[0], "t", "PX", 10_000);
    expect(await run(ACQUIRE, keys, ["t", "1000", "0"])).toEqual([1, 0, -1]);
    expect(await redis().pttl(keys[0])).toBeGreaterThan(9_000);
    const args = ["old", "t", "1000", "0", ""];
    expect(await run(HANDOVER, keys, args)).toEqual([1, 0, 1]);
    expect(await redis().pttl(keys[0])).toBeGreaterThan(9_000);
  });
});

describe("F2: a fence raise counts only where the key is ours or absent", () => {
  it("raises the counter everywhere, counts only on our token or an absent key", async () => {
    const keys = keysOf("f2");
    await redis().set(keys[1], "2");
    expect(await run(FENCE_RAISE, keys, ["11", "x"])).toEqual([1, 11]); // absent
    await redis().set(keys[0], "x", "PX", 5_000);
    expect(await run(FENCE_RAISE, keys, ["11", "x"])).toEqual([1, 11]); // ours
    await redis().set(keys[0], "y", "PX", 5_000);
    expect(await run(FENCE_RAISE, keys, ["12", "x"])).toEqual([0, 12]); // Y holds it
    expect(await redis().get(keys[1])).toBe("12");
    expect(await run(FENCE_RAISE, keys, ["5", "x"])).toEqual([0, 12]); // never lowered
  });
});
