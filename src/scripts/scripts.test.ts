import { describe, expect, it } from "vitest";
import { scriptKeys, tombstoneKey } from "./keys";
import * as lua from "./lua";
import {
  ACQUIRE,
  COMPLETE,
  DISCARD,
  EXTEND,
  FENCE_RAISE,
  FORCE_RELEASE,
  HANDOVER,
  INSPECT,
  LEAVE,
  PASS,
  RECORD,
  RELEASE,
  RESUME,
  SCRIPTS,
} from "./scripts";

/** The commented sources (lua.ts), whose shipped forms the scripts carry (test/scripts). */
const SOURCES = Object.entries(lua).filter((entry): entry is [string, string] =>
  entry[0].endsWith("_LUA"),
);

async function sha1(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("scripts", () => {
  it.each(SCRIPTS.map((s) => [s.name, s] as const))(
    "%s: SHA-1 literal matches WebCrypto",
    async (_, script) => {
      expect(script.sha1).toBe(await sha1(script.lua));
    },
  );

  it("every script has a distinct SHA and uses milliseconds only", () => {
    expect(new Set(SCRIPTS.map((s) => s.sha1)).size).toBe(SCRIPTS.length);
    for (const script of SCRIPTS) expect(script.lua).not.toMatch(/"(EX|EXPIRE|TTL)"/);
    expect(SOURCES.length).toBe(SCRIPTS.length);
    for (const [name, source] of SOURCES) {
      expect(source.startsWith("-- edgelock"), name).toBe(true);
    }
  });

  it("acquire reply shapes", () => {
    expect(ACQUIRE.parse([1, 0, -1])).toEqual({ granted: true, fence: 0 });
    expect(ACQUIRE.parse([1, 7, -1])).toEqual({ granted: true, fence: 7 });
    expect(ACQUIRE.parse([0, 5300, -1])).toEqual({ granted: false, pttl: 5300 });
    // Held by a holder this node placed: its place in the queue's order.
    expect(ACQUIRE.parse([0, 5300, 1_700])).toEqual({ granted: false, pttl: 5300, ahead: 1_700 });
    expect(ACQUIRE.parse([0, -1, -1])).toEqual({ granted: false, pttl: -1 });
    expect(ACQUIRE.parse([2, 86_400_000, -1])).toEqual({
      granted: false,
      done: true,
      pttl: 86_400_000,
    });
    expect(ACQUIRE.parse([2, -1, -1])).toEqual({ granted: false, done: true, pttl: -1 });
    for (const bad of [
      null,
      "OK",
      1,
      [1],
      [1, 2],
      [1, 2, 3, 4],
      ["1", "0", "-1"],
      [4, 0, -1],
      [3, 120, -1],
      [2, -2, -1],
      ["2", 5, -1],
      [1, -1, -1],
      [0, -3, -1],
      [1, 0.5, -1],
      {},
    ]) {
      expect(ACQUIRE.parse(bad)).toBeUndefined();
    }
  });

  it("compare-and-set reply codes", () => {
    for (const script of [EXTEND, RELEASE]) {
      expect(script.parse(1)).toBe(1);
      expect(script.parse(0)).toBe(0);
      expect(script.parse(-1)).toBe(-1);
      for (const bad of [2, "1", null, [1], true, undefined])
        expect(script.parse(bad)).toBeUndefined();
    }
  });

  it("complete reply codes", () => {
    expect(COMPLETE.parse(1)).toBe(1);
    expect(COMPLETE.parse(2)).toBe(2);
    expect(COMPLETE.parse(0)).toBe(0);
    for (const bad of [-1, 3, "1", null, [1], true, undefined]) {
      expect(COMPLETE.parse(bad)).toBeUndefined();
    }
  });

  it("acquire and complete agree on the done marker", () => {
    // Tokens are 32 hex characters, so no token can look like a marker.
    expect(lua.COMPLETE_LUA).toContain('"done:" .. token');
    expect(lua.ACQUIRE_LUA).toContain('string.sub(current, 1, 5) == "done:"');
    expect(lua.COMPLETE_LUA).toContain('string.sub(current, 1, 5) == "done:"');
  });

  it("fence raise, inspect and force release shapes", () => {
    expect(FENCE_RAISE.parse([1, 12])).toEqual({ counts: true, counter: 12 });
    expect(FENCE_RAISE.parse([0, 12])).toEqual({ counts: false, counter: 12 });
    for (const bad of [12, [2, 12], [1, -1], ["1", 12], [1]]) {
      expect(FENCE_RAISE.parse(bad)).toBeUndefined();
    }
    expect(INSPECT.parse([-2, 0, 0])).toEqual({ pttl: -2, fence: 0, kind: "token" });
    expect(INSPECT.parse([1500, 4, 0])).toEqual({ pttl: 1500, fence: 4, kind: "token" });
    expect(INSPECT.parse([86_000, 0, 1])).toEqual({ pttl: 86_000, fence: 0, kind: "done" });
    expect(INSPECT.parse([120, 0, 2])).toEqual({ pttl: 120, fence: 0, kind: "reserved" });
    expect(INSPECT.parse([-3, 0, 0])).toBeUndefined();
    expect(INSPECT.parse([1500, 4])).toBeUndefined();
    expect(INSPECT.parse([1500, 4, 3])).toBeUndefined();
    expect(FORCE_RELEASE.parse(1)).toBe(1);
    expect(FORCE_RELEASE.parse(2)).toBeUndefined();
  });

  it("handover reply shapes", () => {
    expect(HANDOVER.parse([1, 0, 1])).toEqual({
      acquire: { granted: true, fence: 0 },
      released: 1,
    });
    expect(HANDOVER.parse([1, 9, 0])).toEqual({
      acquire: { granted: true, fence: 9 },
      released: 0,
    });
    expect(HANDOVER.parse([0, 4200, -1])).toEqual({
      acquire: { granted: false, pttl: 4200 },
      released: -1,
    });
    expect(HANDOVER.parse([2, 60_000, -1])).toEqual({
      acquire: { granted: false, done: true, pttl: 60_000 },
      released: -1,
    });
    // A hand-off to an earlier waiter of the queue, made by our release (or its re-send).
    expect(HANDOVER.parse([3, 1250, 1])).toEqual({
      acquire: { granted: false, pttl: 1250, handed: true },
      released: 1,
    });
    expect(HANDOVER.parse([3, 80, -1])).toEqual({
      acquire: { granted: false, pttl: 80, handed: true },
      released: -1,
    });
    for (const bad of [null, [1, 0], [1, 0, 2], [0, 4200, 1], [2, 5, 0], [1, -1, 1], ["1", 0, 1]]) {
      expect(HANDOVER.parse(bad)).toBeUndefined();
    }
  });

  it("every script reads ARGV and KEYS only into named, commented locals (or the key helpers)", () => {
    const helpers = [
      "  return KEYS[3 * i - 2]",
      "  return KEYS[3 * i - 1]",
      "  return KEYS[3 * i]",
      "    return n - 1, KEYS[#KEYS]",
    ];
    const named = /^local \w+ = (ARGV|KEYS)\[\d+\]( == "1"| or "[^"]*")? -- \S/;
    for (const [name, source] of SOURCES) {
      const reads = source.split("\n").filter((line) => /\b(ARGV|KEYS)\[/.test(line));
      for (const line of reads) {
        expect(helpers.includes(line) || named.test(line), `${name}: ${line}`).toBe(true);
      }
    }
  });

  it("argument builders put each field where the script's named locals read it", () => {
    const queue = {
      place: 1_700,
      look: 3,
      listener: "abc",
      waitMs: 9_000,
      handMs: 1_000,
      roomMs: 10_000,
      fencing: true,
    };
    const registered = ["1700", "3", "abc", "9000", "1000", "10000", "1"];
    expect(ACQUIRE.args({ token: "t", ttl: 5_000, fencing: true })).toEqual(["t", "5000", "1"]);
    expect(ACQUIRE.args({ token: "t", ttl: 5_000, fencing: true, place: 1_700 })).toEqual([
      "t",
      "5000",
      "1",
      "1700",
    ]);
    expect(ACQUIRE.args({ token: "t", ttl: 5_000, fencing: false, queue })).toEqual([
      "t",
      "5000",
      "0",
      ...registered,
    ]);
    expect(PASS.args({ token: "t", queue })).toEqual(["t", ...registered]);
    expect(EXTEND.args({ token: "t", ttl: 7_000 })).toEqual(["t", "7000"]);
    expect(RESUME.args({ ticketToken: "t0", token: "t", ttl: 5_000, fencing: true })).toEqual([
      "t0",
      "t",
      "5000",
      "1",
    ]);
    expect(RELEASE.args({ token: "t" })).toEqual(["t"]);
    expect(RELEASE.args({ token: "t", before: 900 })).toEqual(["t", "900"]);
    // The counter lifetime keeps its position when there is no place before it.
    expect(RELEASE.args({ token: "t", counterMs: 60_000 })).toEqual(["t", "", "60000"]);
    expect(FENCE_RAISE.args({ fence: 12, token: "t" })).toEqual(["12", "t"]);
    expect(DISCARD.args({ token: "t", keepMs: 5_000 })).toEqual(["t", "5000"]);
    expect(DISCARD.args({ token: "t", keepMs: 5_000, restore: "t0" })).toEqual(["t", "5000", "t0"]);
    expect(COMPLETE.args({ token: "t", retentionMs: 60_000 })).toEqual(["t", "60000"]);
    expect(COMPLETE.args({ token: "t", retentionMs: 60_000, record: "r" })).toEqual([
      "t",
      "60000",
      "r",
    ]);
    const next = { token: "n", ttl: 5_000, fencing: true };
    expect(HANDOVER.args({ token: "t", next })).toEqual(["t", "n", "5000", "1", ""]);
    expect(HANDOVER.args({ token: "t", next, place: 1_700 })).toEqual([
      "t",
      "n",
      "5000",
      "1",
      "1700",
    ]);
    expect(LEAVE.args({ token: "t" })).toEqual(["t"]);
    for (const script of [INSPECT, RECORD, FORCE_RELEASE]) expect(script.args({})).toEqual([]);
  });

  it("key triples flatten in the scripts' order, the tombstone after them", () => {
    const a = { lock: "lock:a", fence: "lock:a:fence", room: "lock:a:wait" };
    const b = { lock: "lock:b", fence: "lock:b:fence", room: "lock:b:wait" };
    expect(scriptKeys([a, b])).toEqual([
      "lock:a",
      "lock:a:fence",
      "lock:a:wait",
      "lock:b",
      "lock:b:fence",
      "lock:b:wait",
    ]);
    expect(scriptKeys([a], tombstoneKey([a, b], "t"))).toEqual([
      "lock:a",
      "lock:a:fence",
      "lock:a:wait",
      "lock:a:void:t",
    ]);
  });
});
