/**
 * What the scripts keep (docs/SAFETY.md §2), on a real redis-server: E1
 * (expiries never go down), F2 (a fence raise counts only where the key is ours or absent), and
 * the wait room service of RELEASE and HANDOVER (earlier waiters of other instances first; a
 * re-sent release recognises its own reservation).
 */
import { describe, expect, it } from "vitest";
import { ACQUIRE, EXTEND, FENCE_RAISE, HANDOVER, RELEASE } from "../../src/scripts";
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
    expect(await run(ACQUIRE, keys, ["t", "1000", "0"])).toEqual([1, 0]);
    expect(await redis().pttl(keys[0])).toBeGreaterThan(9_000);
    const args = ["old", "t", "1000", "0", "", String(Date.now()), "250", ""];
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

describe("the wait room on release and handover", () => {
  const far = () => Date.now() + 60_000;

  it("RELEASE with a local next waiter reserves the key for an earlier poller, for its own ms", async () => {
    const keys = keysOf("poller");
    const poller = `${far()}:p1500:a`;
    await run(ACQUIRE, keys, ["holder", "5000", "0"]);
    await run(ACQUIRE, keys, ["w", "5000", "0", poller, "100", "10000"]);
    // Our next local waiter was placed at 200: the poller (100) came first.
    expect(await run(RELEASE, keys, ["holder", String(Date.now()), "250", "200"])).toBe(1);
    expect(await redis().get(keys[0])).toBe(`wake:${poller}|holder`);
    const pttl = await redis().pttl(keys[0]);
    expect(pttl).toBeGreaterThan(1_000);
    expect(pttl).toBeLessThanOrEqual(1_500);
    // Held for everyone else (flag 3), free for that poller.
    expect(await run(ACQUIRE, keys, ["n", "5000", "0"])).toEqual([3, expect.any(Number)]);
    expect(await run(ACQUIRE, keys, ["w2", "5000", "0", poller, "100", "10000"])).toEqual([1, 0]);
  });

  it("RELEASE without local waiters skips pollers (they race like anyone) and deletes", async () => {
    const keys = keysOf("poller-free");
    await run(ACQUIRE, keys, ["holder", "5000", "0"]);
    await run(ACQUIRE, keys, ["w", "5000", "0", `${far()}:p1500:a`, "100", "10000"]);
    expect(await run(RELEASE, keys, ["holder", String(Date.now()), "250"])).toBe(1);
    expect(await redis().exists(keys[0])).toBe(0);
    expect(await redis().zcard(keys[2])).toBe(1); // still waiting, keeps its place
  });

  it("RELEASE leaves a later-placed waiter to the local next one", async () => {
    const keys = keysOf("later");
    await run(ACQUIRE, keys, ["holder", "5000", "0"]);
    await run(ACQUIRE, keys, ["w", "5000", "0", `${far()}:abc:a`, "300", "10000"]);
    expect(await run(RELEASE, keys, ["holder", String(Date.now()), "250", "200"])).toBe(1);
    expect(await redis().exists(keys[0])).toBe(0);
  });

  it("HANDOVER reserves for an earlier outside waiter instead of granting the next local one", async () => {
    const keys = keysOf("handover-fair");
    const outside = `${far()}:p1500:o`;
    const local = `${far()}:p1500:l`;
    await run(ACQUIRE, keys, ["holder", "5000", "1"]);
    await run(ACQUIRE, keys, ["o", "5000", "1", outside, "100", "10000"]);
    await run(ACQUIRE, keys, ["l", "5000", "1", local, "200", "10000"]);
    const args = ["holder", "next", "5000", "1", local, String(Date.now()), "250", "200"];
    expect(await run(HANDOVER, keys, args)).toEqual([3, 1500, 1]);
    expect(await redis().get(keys[0])).toBe(`wake:${outside}|holder`);
    expect(await redis().get(keys[1])).toBe("1"); // no fence drawn for a reservation
    // A re-send finds its own reservation: released, still reserved.
    expect(await run(HANDOVER, keys, args)).toEqual([3, expect.any(Number), 1]);
    // Once the outside waiter is served, the local one is next.
    await run(ACQUIRE, keys, ["o2", "5000", "1", outside, "100", "10000"]);
    expect(await redis().zrange(keys[2], 0, -1)).toEqual([local]);
  });

  it("a re-sent RELEASE that finds its own reservation reports released (defect d)", async () => {
    const keys = keysOf("resend");
    const listener = `${far()}:abc:a`;
    await run(ACQUIRE, keys, ["holder", "5000", "0"]);
    await run(ACQUIRE, keys, ["w", "5000", "0", listener, "100", "10000"]);
    const args = ["holder", String(Date.now()), "250"];
    expect(await run(RELEASE, keys, args)).toBe(1);
    expect(await redis().get(keys[0])).toBe(`wake:${listener}|holder`);
    expect(await run(RELEASE, keys, args)).toBe(1);
    // Someone else's release does not recognise it.
    expect(await run(RELEASE, keys, ["other", String(Date.now()), "250"])).toBe(-1);
  });
});
