/**
 * The simulated node and a real redis-server must agree: every case runs the same setup and the
 * same script call on both, then compares the reply and what the keys hold afterwards (value or
 * sorted set, and PTTL within the time the real call took). One line per case: add one for every
 * script branch you add (docs/SAFETY.md §7).
 */
import { describe, expect, it } from "vitest";
import { SimNode } from "../../../src/memory";
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
  RECORD,
  RELEASE,
  RESUME,
  type Script,
} from "../../../src/scripts";
import { useDevCluster } from "../../support/dev-cluster";
import { sha1 } from "./sha1";

const dev = useDevCluster({ nodes: 1 });

/** Placeholders in setup and args: `$now` (epoch ms), `$far` (now + 60 s), `$past` (now − 1 s). */
interface Case {
  readonly name: string;
  readonly setup?: readonly (readonly string[])[];
  readonly script: Script<unknown>;
  readonly args: readonly string[];
  /** Keys the script takes (default one lock: `k`, `f`, `w`). */
  readonly keys?: readonly string[];
}

const T = "0123456789abcdef0123456789abcdef";
const W = "$far:abc:1"; // a member of an older version's wait room (a sorted set)
const hold = (value: string, ms = "9000") => ["SET", "k", value, "PX", ms];
/** An older version's wait room (a sorted set): the queue scripts never touch one. */
const room = (...members: [string, string][]) => members.map(([s, m]) => ["ZADD", "w", s, m]);
const fence = (n: number) => ["SET", "f", String(n)];
/** A waiting call's registration (ACQUIRE's ARGV from 4): place 100, look 1, listener `abc`. */
const REG = ["100", "1", "abc", "4000", "1500", "4000", "0"];
/** A lock on two keys: `k` (fence `f`, room `w`) and `k2` (`f2`, `w2`). */
const TWO = ["k", "f", "w", "k2", "f2", "w2"];
const hold2 = (value: string, ms = "9000") => ["SET", "k2", value, "PX", ms];
const room2 = (...members: [string, string][]) => members.map(([s, m]) => ["ZADD", "w2", s, m]);

/** One lock (or two) plus the tombstone key of the round's token (see `TRIPLES` in lua.ts). */
const VOID = ["k", "f", "w", "v"];
const VOID2 = [...TWO, "v"];
const tomb = ["SET", "v", "1", "PX", "9000"];

const CASES: readonly Case[] = [
  { name: "acquire free", script: ACQUIRE, args: [T, "5000", "0"] },
  { name: "acquire free, fenced", setup: [fence(4)], script: ACQUIRE, args: [T, "5000", "1"] },
  {
    name: "acquire re-sent, longer",
    setup: [hold(T, "1000"), fence(4)],
    script: ACQUIRE,
    args: [T, "5000", "1"],
  },
  {
    name: "acquire re-sent, never shorter",
    setup: [hold(T)],
    script: ACQUIRE,
    args: [T, "1000", "0"],
  },
  { name: "acquire held", setup: [hold("x")], script: ACQUIRE, args: [T, "5000", "0"] },
  {
    name: "acquire held, room of another type",
    setup: [hold("x"), ["SET", "w", "user"]],
    script: ACQUIRE,
    args: [T, "5000", "0", ...REG],
  },
  {
    name: "acquire done marker",
    setup: [hold("done:x", "60000")],
    script: ACQUIRE,
    args: [T, "5000", "0", ...REG],
  },
  { name: "extend longer", setup: [hold(T, "1000")], script: EXTEND, args: [T, "5000"] },
  { name: "extend never shorter", setup: [hold(T)], script: EXTEND, args: [T, "1000"] },
  { name: "extend absent", script: EXTEND, args: [T, "5000"] },
  { name: "extend other", setup: [hold("x")], script: EXTEND, args: [T, "5000"] },
  { name: "resume, longer", setup: [hold(T, "1000")], script: RESUME, args: [T, "y", "5000", "0"] },
  {
    name: "resume never shorter, fenced",
    setup: [hold(T), fence(4)],
    script: RESUME,
    args: [T, "y", "1000", "1"],
  },
  {
    name: "resume re-sent",
    setup: [hold("y"), fence(5)],
    script: RESUME,
    args: [T, "y", "5000", "1"],
  },
  { name: "resume absent", script: RESUME, args: [T, "y", "5000", "1"] },
  { name: "resume other", setup: [hold("x")], script: RESUME, args: [T, "y", "5000", "1"] },
  { name: "release plain", setup: [hold(T)], script: RELEASE, args: [T] },
  { name: "release absent", script: RELEASE, args: [T] },
  { name: "release other", setup: [hold("x")], script: RELEASE, args: [T] },
  { name: "release, empty room", setup: [hold(T)], script: RELEASE, args: [T] },
  { name: "fence raise, absent", setup: [fence(2)], script: FENCE_RAISE, args: ["11", T] },
  { name: "fence raise, ours", setup: [hold(T), fence(11)], script: FENCE_RAISE, args: ["11", T] },
  {
    name: "fence raise, other",
    setup: [hold("x"), fence(2)],
    script: FENCE_RAISE,
    args: ["11", T],
  },
  { name: "fence raise, lower", setup: [fence(20)], script: FENCE_RAISE, args: ["11", T] },
  { name: "inspect absent", script: INSPECT, args: [] },
  { name: "inspect token", setup: [hold(T), fence(3)], script: INSPECT, args: [] },
  { name: "inspect done", setup: [hold("done:x", "60000")], script: INSPECT, args: [] },
  { name: "inspect reserved", setup: [hold(`wake:${W}|x`, "250")], script: INSPECT, args: [] },
  { name: "force release", setup: [hold("x"), fence(3)], script: FORCE_RELEASE, args: [] },
  { name: "complete ours", setup: [hold(T)], script: COMPLETE, args: [T, "60000"] },
  { name: "complete absent", script: COMPLETE, args: [T, "60000"] },
  { name: "complete done", setup: [hold("done:x", "60000")], script: COMPLETE, args: [T, "60000"] },
  { name: "complete other", setup: [hold("x")], script: COMPLETE, args: [T, "60000"] },
  {
    name: "complete with a record",
    setup: [hold(T)],
    script: COMPLETE,
    args: [T, "60000", '{"v":1,"s":200}'],
  },
  {
    name: "complete with a record, re-sent",
    setup: [hold(`done:${T}|{"v":1}`, "60000")],
    script: COMPLETE,
    args: [T, "60000", '{"v":2}'],
  },
  // A one-shot key's fence counter (docs/SAFETY.md §5): COMPLETE and a one-shot RELEASE give it an
  // expiry (never shorter), a counting raise removes it, a raise that does not count keeps it.
  { name: "complete, counter", setup: [hold(T), fence(4)], script: COMPLETE, args: [T, "60000"] },
  {
    name: "complete done, counter kept longer",
    setup: [hold("done:x", "60000"), fence(4), ["PEXPIRE", "f", "90000"]],
    script: COMPLETE,
    args: [T, "60000"],
  },
  {
    name: "release one-shot, counter",
    setup: [hold(T), fence(4)],
    script: RELEASE,
    args: [T, "", "30000"],
  },
  {
    name: "release one-shot absent, counter",
    setup: [fence(4)],
    script: RELEASE,
    args: [T, "", "30000"],
  },
  {
    name: "release one-shot other, counter untouched",
    setup: [hold("x"), fence(4)],
    script: RELEASE,
    args: [T, "", "30000"],
  },
  {
    name: "fence raise counts, counter expiry removed",
    setup: [fence(11), ["PEXPIRE", "f", "30000"]],
    script: FENCE_RAISE,
    args: ["11", T],
  },
  {
    name: "fence raise beside a marker, new counter expires with it",
    setup: [hold("done:x", "60000")],
    script: FENCE_RAISE,
    args: ["11", T],
  },
  {
    name: "fence raise other, counter expiry kept",
    setup: [hold("x"), fence(2), ["PEXPIRE", "f", "30000"]],
    script: FENCE_RAISE,
    args: ["11", T],
  },
  { name: "record absent", script: RECORD, args: [] },
  { name: "record held", setup: [hold(T)], script: RECORD, args: [] },
  { name: "record reserved", setup: [hold(`wake:${W}|x`, "250")], script: RECORD, args: [] },
  { name: "record done, none kept", setup: [hold("done:x", "60000")], script: RECORD, args: [] },
  {
    name: "record done with a record",
    setup: [hold('done:x|{"v":1,"b":"a|b"}', "60000")],
    script: RECORD,
    args: [],
  },
  {
    name: "record, a key of another type",
    setup: [["ZADD", "k", "1", "m"]],
    script: RECORD,
    args: [],
  },
  {
    name: "handover ours",
    setup: [hold(T), fence(7), ...room(["300", W])],
    script: HANDOVER,
    args: [T, "n", "5000", "1", "300"],
  },
  { name: "handover absent", script: HANDOVER, args: [T, "n", "5000", "0", ""] },
  {
    name: "handover re-sent after the grant",
    setup: [hold("n", "1000"), fence(8)],
    script: HANDOVER,
    args: [T, "n", "5000", "1", "300"],
  },
  {
    name: "handover other",
    setup: [hold("x")],
    script: HANDOVER,
    args: [T, "n", "5000", "1", ""],
  },
  {
    name: "handover done",
    setup: [hold("done:x", "60000")],
    script: HANDOVER,
    args: [T, "n", "5000", "1", ""],
  },
  { name: "leave, room of another type", setup: [["SET", "w", "user"]], script: LEAVE, args: [W] },
  { name: "leave keeps a holder's token", setup: [hold(T)], script: LEAVE, args: [W] },
  // Several keys in one lock (docs/SAFETY.md §4b M1): all or none on a node.
  {
    name: "two keys: acquire free, one fence above both counters",
    setup: [fence(4), ["SET", "f2", "9"]],
    script: ACQUIRE,
    args: [T, "5000", "1"],
    keys: TWO,
  },
  {
    name: "two keys: acquire, one a done marker",
    setup: [hold2("done:x", "60000")],
    script: ACQUIRE,
    args: [T, "5000", "0", ...REG],
    keys: TWO,
  },
  {
    name: "two keys: acquire re-sent, one expired here",
    setup: [hold(T, "1000")],
    script: ACQUIRE,
    args: [T, "5000", "0"],
    keys: TWO,
  },
  {
    name: "two keys: extend both ours",
    setup: [hold(T, "1000"), hold2(T, "1000")],
    script: EXTEND,
    args: [T, "5000"],
    keys: TWO,
  },
  {
    name: "two keys: extend, one another's",
    setup: [hold(T, "1000"), hold2("x")],
    script: EXTEND,
    args: [T, "5000"],
    keys: TWO,
  },
  {
    name: "two keys: extend, one absent",
    setup: [hold(T, "1000")],
    script: EXTEND,
    args: [T, "5000"],
    keys: TWO,
  },
  {
    name: "two keys: resume both ours, fenced",
    setup: [hold(T, "1000"), hold2(T, "1000"), fence(3), ["SET", "f2", "6"]],
    script: RESUME,
    args: [T, "y", "5000", "1"],
    keys: TWO,
  },
  {
    name: "two keys: resume, one absent",
    setup: [hold(T)],
    script: RESUME,
    args: [T, "y", "5000", "1"],
    keys: TWO,
  },
  {
    name: "two keys: release, one another's",
    setup: [hold(T), hold2("x")],
    script: RELEASE,
    args: [T],
    keys: TWO,
  },
  {
    name: "two keys: fence raise, ours and absent",
    setup: [hold(T), fence(5), ["SET", "f2", "12"]],
    script: FENCE_RAISE,
    args: ["11", T],
    keys: TWO,
  },
  {
    name: "two keys: fence raise, one another's",
    setup: [hold(T), hold2("x"), fence(5)],
    script: FENCE_RAISE,
    args: ["11", T],
    keys: TWO,
  },
  {
    name: "two keys: handover, nobody earlier",
    setup: [hold(T), hold2(T), fence(7), ...room(["300", W]), ...room2(["300", W])],
    script: HANDOVER,
    args: [T, "n", "5000", "1", "300"],
    keys: TWO,
  },
  {
    name: "two keys: handover re-sent after the grant",
    setup: [hold("n", "1000"), hold2("n", "1000"), fence(8)],
    script: HANDOVER,
    args: [T, "n", "5000", "1", "300"],
    keys: TWO,
  },
  {
    name: "two keys: handover, one another's",
    setup: [hold(T), hold2("x")],
    script: HANDOVER,
    args: [T, "n", "5000", "1", ""],
    keys: TWO,
  },
  { name: "acquire free, no tombstone", script: ACQUIRE, args: [T, "5000", "1"], keys: VOID },
  {
    name: "acquire free, tombstoned",
    setup: [tomb],
    script: ACQUIRE,
    args: [T, "5000", "1", ...REG],
    keys: VOID,
  },
  {
    name: "two keys: acquire tombstoned",
    setup: [tomb],
    script: ACQUIRE,
    args: [T, "5000", "1"],
    keys: VOID2,
  },
  {
    name: "resume tombstoned",
    setup: [hold(T), tomb],
    script: RESUME,
    args: [T, "y", "5000", "1"],
    keys: VOID,
  },
  {
    name: "resume, the ticket's record lists this resume",
    setup: [hold(T), ["SET", "v", "x,y,", "PX", "9000"]],
    script: RESUME,
    args: [T, "y", "5000", "1"],
    keys: VOID,
  },
  {
    name: "resume, the ticket's record lists another resume: swaps, reports the record",
    setup: [hold(T), ["SET", "v", "x,", "PX", "9000"]],
    script: RESUME,
    args: [T, "y", "5000", "1"],
    keys: VOID,
  },
  {
    name: "resume held by another, the ticket's record here",
    setup: [hold("x"), ["SET", "v", "x,", "PX", "9000"]],
    script: RESUME,
    args: [T, "y", "5000", "1"],
    keys: VOID,
  },
  {
    name: "discard, undo a second resume: appended to the ticket's record, its expiry kept",
    setup: [hold("y", "3000"), ["SET", "v", "x,", "PX", "20000"]],
    script: DISCARD,
    args: ["y", "5000", T],
    keys: VOID,
  },
  {
    name: "resume, no tombstone",
    setup: [hold(T)],
    script: RESUME,
    args: [T, "y", "5000", "1"],
    keys: VOID,
  },
  {
    name: "handover tombstoned",
    setup: [hold("h"), tomb],
    script: HANDOVER,
    args: ["h", T, "5000", "0", ""],
    keys: VOID,
  },
  { name: "discard ours", setup: [hold(T)], script: DISCARD, args: [T, "5000"], keys: VOID },
  { name: "discard absent", script: DISCARD, args: [T, "5000"], keys: VOID },
  { name: "discard other", setup: [hold("x")], script: DISCARD, args: [T, "5000"], keys: VOID },
  {
    name: "discard, undo a resume",
    setup: [hold(T, "3000")],
    script: DISCARD,
    args: [T, "5000", "t0"],
    keys: VOID,
  },
  {
    name: "discard, undo a resume: the tombstone outlives the ticket's token",
    setup: [hold(T, "30000")],
    script: DISCARD,
    args: [T, "5000", "t0"],
    keys: VOID,
  },
  {
    name: "discard, undo a resume already undone: the tombstone outlives the ticket's token",
    setup: [hold("t0", "30000")],
    script: DISCARD,
    args: [T, "5000", "t0"],
    keys: VOID,
  },
  {
    name: "raise, absent key beside an expiring counter: no count, the expiry kept",
    setup: [["SET", "f", "3", "PX", "60000"]],
    script: FENCE_RAISE,
    args: ["5", T],
  },
  {
    name: "raise, absent key beside an expiring higher counter: no count, the expiry kept",
    setup: [["SET", "f", "7", "PX", "60000"]],
    script: FENCE_RAISE,
    args: ["5", T],
  },
  {
    name: "raise, our token beside an expiring counter: counts, the expiry removed",
    setup: [hold(T), ["SET", "f", "3", "PX", "60000"]],
    script: FENCE_RAISE,
    args: ["5", T],
  },
  {
    name: "two keys: discard, undo a resume",
    setup: [hold(T, "3000"), hold2(T, "3000")],
    script: DISCARD,
    args: [T, "5000", "t0"],
    keys: VOID2,
  },
];

let counter = 0;

/** A hash's fields and values in the server's order (ioredis's `hgetall` makes an object of them). */
const hgetall = (key: string): Promise<unknown> =>
  dev.direct(0).eval("return redis.call('HGETALL', KEYS[1])", 1, key);

/** Equal, except numbers above 50 may be up to `slack` lower on the real node. */
function close(sim: unknown, real: unknown, slack: number): boolean {
  if (Array.isArray(sim) && Array.isArray(real)) {
    return sim.length === real.length && sim.every((v, i) => close(v, real[i], slack));
  }
  if (typeof sim === "number" && typeof real === "number" && sim > 50) {
    return sim - real >= 0 && sim - real <= slack;
  }
  return sim === real;
}

describe("simulated node = redis-server, script by script", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", async (_, c) => {
    const prefix = `parity:${counter++}:`;
    const real = dev.direct(0);
    const now = Date.now();
    const fill = (text: string) =>
      text
        .replaceAll("$now", String(now))
        .replaceAll("$far", String(now + 60_000))
        .replaceAll("$past", String(now - 1_000));
    const name = (key: string) => `${prefix}${key}`;
    const keys = (c.keys ?? ["k", "f", "w"]).map(name);
    const sim = new SimNode({
      now: () => now,
      sha1,
      // No subscriber on either side (the queue's hand-offs: parity-queue*.test.ts).
      onPublish: () => 0,
    });
    for (const argv of c.setup ?? []) {
      const [cmd = "", key = "", ...rest] = argv.map(fill);
      sim.command([cmd, name(key), ...rest]);
      await real.call(cmd, name(key), ...rest);
    }
    const args = c.args.map(fill);
    const simReply = sim.eval(c.script.lua, keys, args);
    const started = Date.now();
    const realReply = await real.eval(c.script.lua, keys.length, ...keys, ...args);
    const took = Date.now() - started + (started - now) + 2;
    // Real time passed between the two calls: a PTTL in a reply (any value above 50 here; flags
    // and fences in these cases are smaller) may be lower on the real node by that much.
    expect(simReply.ok).toBe(true);
    const simValue = simReply.ok ? simReply.value : undefined;
    expect(
      close(simValue, realReply, took + 50),
      `${JSON.stringify(simValue)} vs ${JSON.stringify(realReply)}`,
    ).toBe(true);
    // The reply parses as the client expects.
    expect(c.script.parse(realReply)).toBeDefined();
    for (const key of keys) {
      const type = await real.type(key);
      expect(sim.type(key), `type of ${key}`).toBe(type);
      if (type === "string") expect(sim.get(key), key).toBe(await real.get(key));
      if (type === "zset") {
        const flat = await real.zrange(key, 0, -1, "WITHSCORES");
        expect(sim.zrange(key).flat().map(String), key).toEqual(flat);
      }
      if (type === "hash") expect(sim.command(["HGETALL", key]), key).toEqual(await hgetall(key));
      const realPttl = await real.pttl(key);
      // The real key's PTTL is read now, later than the reply: it may be lower by all the time
      // since the simulated node's frozen `now`, reads of the keys before it included.
      const read = Date.now() - now + 2;
      const simPttl = sim.pttl(key);
      if (realPttl < 0) expect(simPttl, `pttl of ${key}`).toBe(realPttl);
      else {
        expect(simPttl - realPttl, `pttl of ${key}`).toBeGreaterThanOrEqual(0);
        expect(simPttl - realPttl, `pttl of ${key}`).toBeLessThanOrEqual(read + 50);
      }
    }
  });

  it("EVALSHA answers NOSCRIPT until EVAL loaded the script, and after a restart", () => {
    const sim = new SimNode({ now: () => 0, sha1 });
    expect(sim.evalsha(RELEASE.sha1, ["k", "f", "w"], [T])).toEqual({
      ok: false,
      error: "NOSCRIPT No matching script. Please use EVAL.",
    });
    sim.eval(RELEASE.lua, ["k", "f", "w"], [T]);
    expect(sim.evalsha(RELEASE.sha1, ["k", "f", "w"], [T])).toEqual({ ok: true, value: 0 });
    sim.set("k", T);
    sim.restart(true);
    expect(sim.evalsha(RELEASE.sha1, ["k", "f", "w"], [T]).ok).toBe(false);
    expect(sim.get("k")).toBe(T);
    sim.restart(false);
    expect(sim.keys()).toEqual([]);
  });

  it("keys expire on the node's clock: gone once now > deadline", () => {
    let now = 1_000;
    const sim = new SimNode({ now: () => now, sha1 });
    sim.set("k", "v", 100);
    now = 1_100;
    expect(sim.pttl("k")).toBe(0);
    now = 1_101;
    expect(sim.get("k")).toBeNull();
    expect(sim.pttl("k")).toBe(-2);
  });

  it("a hash expires as any key does, here on the virtual clock and on redis-server", async () => {
    const real = dev.direct(0);
    const key = `parity:${counter++}:h`;
    let now = 1_000;
    const sim = new SimNode({ now: () => now, sha1 });
    for (const argv of [
      ["HSET", key, "a", "1", "b", "2"],
      ["PEXPIRE", key, "40"],
    ]) {
      sim.command(argv);
      await real.call(argv[0] as string, ...argv.slice(1));
    }
    now = 1_040;
    expect([sim.command(["HLEN", key]), sim.pttl(key)]).toEqual([2, 0]);
    now = 1_041;
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect([sim.command(["HLEN", key]), sim.command(["HGET", key, "a"])]).toEqual([0, null]);
    expect([await real.hlen(key), await real.hget(key, "a")]).toEqual([0, null]);
    expect([sim.command(["HGETALL", key]), sim.type(key), sim.pttl(key), sim.keys()]).toEqual([
      await hgetall(key),
      await real.type(key),
      await real.pttl(key),
      [],
    ]);
  });
});

/**
 * A user's own script on both (what `edgelock/testing` and `edgelock dev` promise for it): the
 * reply or the error text, and what the keys hold afterwards. `k` and `z` are the keys (KEYS[1],
 * KEYS[2]); setup commands name them the same way; `$far` in args is now + 60 s.
 */
interface UserCase {
  readonly name: string;
  readonly lua: string;
  readonly setup?: readonly (readonly string[])[];
  readonly args?: readonly string[];
  /** Compare integer replies as their decimal text (ioredis reads those past 2^53 inexactly). */
  readonly exact?: true;
}

/** A reply with its integers as exact decimal text. */
const exactText = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(exactText)
    : typeof value === "number"
      ? BigInt(value).toString()
      : value;

const ERROR_FORMS = "local ok, e = pcall(redis.call, 'INCR', KEYS[1]) return e";
const USER_CASES: readonly UserCase[] = [
  // Integer replies are Lua 5.1 numbers, written without a fraction.
  { name: "integer reply concatenated", lua: 'return "job-" .. redis.call("INCR", KEYS[1])' },
  {
    name: "integer reply through tostring and type",
    lua: 'return tostring(redis.call("INCR", KEYS[1])) .. "|" .. type(redis.call("INCR", KEYS[1]))',
  },
  {
    name: "numbers as text (%.14g)",
    lua: 'return tostring(10/2) .. " " .. tostring(0/0) .. " " .. tostring(1/0) .. " " .. tostring(-1/0) .. " " .. tostring(2^53) .. " " .. 1e15 .. " " .. 0.1 .. " " .. 123456789012345 .. " " .. 1/3 .. " " .. 1e-5 .. " " .. 2^31 + 2^31',
  },
  {
    name: "string.format: %d truncates, C's conversions",
    lua: "return string.format('%d|%d|%5.2f|%s|%x|%X|%o|%c|%i|%e|%g|%g|%g|%.3f|%+d|%05d|%-4d|%#x|%q|%5.1s|%%', 3.7, -3.7, 2.5, 10/2, 255.9, 255, 8, 65.9, 2.9, 1.5, 2, 1e20, 1e-5, 2.0005, 5, 42, 7, 255, 'a\\n', 'abc')",
  },
  {
    name: "string.format: big integers, ties to even",
    lua: "return string.format('%d %.14g %.0f %.2f %.1e %g', 3e9, 123456789012345, 2.5, 0.125, 2.25, 100000)",
  },
  {
    name: "string.format: the # flag, widths",
    lua: "return string.format('%#g|%#.0f|%#.0e|%#o|%#X|%8.3e|%-8g|%+.2f|% d|%.3d', 100000, 2, 3, 8, 255, 1234.5, 0.5, 2, 7, 5)",
  },
  { name: "table.concat of numbers", lua: 'return table.concat({1, 2.5, 10/2, -0.5}, ",")' },
  {
    name: "tonumber",
    lua: 'return {tonumber("0x10"), tonumber("1e2"), tonumber(" 5 "), tonumber("10") / 4 * 4, tonumber("5x")}',
  },
  {
    name: "no 32-bit wrap, floor",
    lua: 'return (2147483647 + 1) .. " " .. (tonumber(ARGV[1]) * 2) .. " " .. math.floor(3.7) .. " " .. #KEYS * 1.5',
    args: ["3000000000"],
  },
  {
    name: "hex numerals past 2^31",
    lua: 'return tostring(0xffffffff) .. " " .. tostring(0x100000000) .. " " .. 0x7fffffffffffffff .. " " .. -0x80000000 .. " " .. ("0xffffffff" + 0) .. " " .. tonumber("0x1FFFFFFFFFFFFF") .. " " .. tonumber(" 0x10 ")',
  },
  {
    name: "tonumber with a base",
    lua: 'return {tostring(tonumber("ffffffffffff", 16)), tostring(tonumber("0xff", 16)), tostring(tonumber("-ff", 16)), tostring(tonumber("zz", 36)), tostring(tonumber("777", 8)), tostring(tonumber(" 101 ", 2)), tostring(tonumber("12", 2)), tostring(tonumber("1.5", 10)), tostring(tonumber("", 16)), tostring(tonumber("ffffffffffffffffffff", 16)), tostring(tonumber(255, 16)), tostring(tonumber("0x", 16))}',
  },
  { name: "tonumber with base 1", lua: 'return tonumber("1", 1)' },
  { name: "result numbers truncated", lua: 'return {3.99, -3.7, 2^31 + 0.5, true, "x", false, 3}' },
  {
    name: "Lua 5.1 names",
    lua: "return {_VERSION, #{unpack({1, 2, 3})}, math.pow(2, 10), table.getn({1, 2}), table.maxn({[5] = 1}), type(loadstring), type(print), type(math.tointeger), type(table.unpack)}",
  },
  // Redis's own generator, one per server, never reseeded between scripts: a fresh node's first
  // draws (the first script on this redis-server to draw), then a seeded sequence.
  {
    name: "math.random on a fresh node",
    lua: "return {math.random(100), math.random(100), math.random(1, 6), math.floor(math.random() * 1e6)}",
  },
  {
    name: "math.randomseed",
    lua: "math.randomseed(42) return {math.random(1000), math.random(-5, 5), math.random(1, 1)}",
  },
  { name: "math.random, an empty interval", lua: "return math.random(0)" },
  // Redis 7's protected globals: nothing a script leaves survives it, on any node.
  { name: "creating a global", lua: "x = 1 return 1" },
  { name: "reading an unset global", lua: "return y" },
  { name: "writing a library", lua: "string.foo = 1 return 1" },
  { name: "rawset on the globals", lua: 'rawset(_G, "z", 1) return 1' },
  { name: "setmetatable on the globals", lua: "setmetatable(_G, {}) return 1" },
  { name: "writing the string metatable", lua: 'getmetatable("").x = 1 return 1' },
  { name: "table.insert into a library", lua: "table.insert(string, 1) return 1" },
  { name: "writing redis", lua: "redis.foo = 1 return 1" },
  {
    name: "KEYS and locals stay writable",
    lua: 'KEYS[1] = "a" local t = {} t.x = 2 return KEYS[1] .. t.x',
  },
  // redis.* helpers and cjson.
  { name: "error_reply with a code", lua: 'return redis.error_reply("MY bad")' },
  { name: "error_reply without a code", lua: 'return redis.error_reply("bad")' },
  { name: "error_reply with a dash", lua: 'return redis.error_reply("-NOPE x")' },
  { name: "error_reply empty", lua: 'return redis.error_reply("")' },
  { name: "error_reply of a number", lua: "return redis.error_reply(12)" },
  { name: "error_reply raised", lua: 'error(redis.error_reply("MY x"))' },
  { name: "status_reply", lua: 'return redis.status_reply("FINE")' },
  { name: "status_reply of a number", lua: "return redis.status_reply(5)" },
  { name: "sha1hex", lua: 'return {redis.sha1hex(""), redis.sha1hex(12), redis.sha1hex("abc")}' },
  { name: "sha1hex without argument", lua: "return redis.sha1hex()" },
  {
    name: "log and its levels",
    lua: 'return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING, redis.log(redis.LOG_WARNING, "hello")}',
  },
  { name: "log with one argument", lua: "redis.log(redis.LOG_WARNING)" },
  { name: "log with a bad level", lua: 'redis.log(9, "x")' },
  { name: "log with a level not a number", lua: 'redis.log("x", "y")' },
  { name: "setresp(2)", lua: "redis.setresp(2) return 1" },
  { name: "setresp(4)", lua: "return redis.setresp(4)" },
  {
    name: "cjson.encode",
    lua: 'return cjson.encode({1, 2, {a = 1}, "x\\"/\\n\\1", true, false, cjson.null})',
  },
  {
    name: "cjson.encode of scalars",
    lua: "return cjson.encode(3) .. cjson.encode(0.1) .. cjson.encode(1e20) .. cjson.encode({}) .. cjson.encode({a = 1.5}) .. cjson.encode({[1] = 1, [3] = 3})",
  },
  { name: "cjson.encode of inf", lua: "return cjson.encode(1/0)" },
  { name: "cjson.encode of a function", lua: "return cjson.encode(function() end)" },
  { name: "cjson.encode of a sparse array", lua: "return cjson.encode({[20] = 1})" },
  { name: "cjson.encode of a table key", lua: "return cjson.encode({[{}] = 1})" },
  { name: "cjson.decode", lua: 'return cjson.decode("[1,2.5,\\"x\\"]")[2]' },
  {
    name: "cjson.decode of objects and null",
    lua: 'local t = cjson.decode(\'{"a":[1,null,3],"b":{"c":true},"d":"\\\\u00e9"}\') return {t.a[1], t.a[3], tostring(t.a[2] == cjson.null), tostring(t.b.c), t.d, cjson.encode(t.a)}',
  },
  {
    name: "cjson.decode: lenient numbers, escapes, control characters kept",
    lua: "local t = cjson.decode(ARGV[1]) return {t[1], t[2], tostring(t[3]), t[4], t[5], t[6], #t[7], t[8], t[9], tostring(t[10])}",
    args: ['[01, 0x10, -inf, "\\u00e9\\ud83d\\ude00", "a\tb", 1e3, [], "\\/\\b", +2, Infinity]'],
  },
  ...[
    "{bad",
    "[1,2",
    "[1 2]",
    '{"a" 1}',
    '{"a":1,}',
    "nul",
    '"abc',
    '"\\q"',
    "1x",
    "",
    " ",
    "[1,]",
    "-",
    "1.5e",
    '"\\u12"',
    '"\\ud83d"',
    '{"a":1} x',
    "+1",
    "+x",
    ".5",
    "0x",
    "[".repeat(1001),
  ].map((json) => ({
    name: `cjson.decode of ${JSON.stringify(json.slice(0, 12))}`,
    lua: "return cjson.decode(ARGV[1])",
    args: [json],
  })),
  // Errors in Redis 7's form.
  { name: "error()", lua: 'error("boom")' },
  { name: "error() of a number", lua: "error(12)" },
  { name: "error() at level 0", lua: 'error("x", 0)' },
  { name: "error() in a function", lua: 'local function f()\n  error("deep")\nend\n\nf()' },
  { name: "runtime error on line 3", lua: "local t = {}\n\nreturn t.a.b" },
  { name: "indexing a nil local", lua: "local t = nil return t.x" },
  { name: "arithmetic on a nil global", lua: "return 1 + nosuch" },
  {
    name: "redis.call error",
    lua: '\nreturn redis.call("INCR", KEYS[1])',
    setup: [["SET", "k", "str"]],
  },
  { name: "redis.call with a table", lua: 'return redis.call("GET", {})' },
  { name: "redis.call with too few arguments", lua: 'return redis.call("GET")' },
  { name: "redis.call with too many arguments", lua: 'return redis.call("INCR", KEYS[1], 2)' },
  { name: "redis.pcall with too few arguments", lua: 'return redis.pcall("ZADD", KEYS[2], 1)' },
  { name: "redis.call without arguments", lua: "return redis.call()" },
  { name: "pcall(redis.call) gives the text", lua: ERROR_FORMS, setup: [["SET", "k", "str"]] },
  {
    name: "redis.pcall gives the error table",
    lua: 'local e = redis.pcall("INCR", KEYS[1]) return type(e) .. " " .. e.err',
    setup: [["SET", "k", "str"]],
  },
  {
    name: "redis.pcall's error returned",
    lua: 'return redis.pcall("INCR", KEYS[1])',
    setup: [["SET", "k", "str"]],
  },
  { name: "pcall of an error table", lua: 'local ok, e = pcall(error, {err = "x"}) return e' },
  { name: "compile error at the end", lua: "return 1 .." },
  { name: "compile error", lua: "return a b" },
  ...[
    "return 7 // 2",
    "local x = 1 & 3 return x",
    "local x = 1 | 2 return x",
    "return ~1",
    "return 1 << 2",
    "return 1 >> 2",
    "::top:: return 1",
  ].map((lua) => ({ name: `Lua 5.3 syntax: ${lua}`, lua })),
  { name: "~= is still not-equal", lua: "return tostring(1 ~= 2)" },
  // Commands.
  {
    name: "PEXPIRE GT, LT, NX, XX on a key with a TTL",
    lua: 'return {redis.call("PEXPIRE", KEYS[1], 20000, "GT"), redis.call("PEXPIRE", KEYS[1], 5000, "gt"), redis.call("PEXPIRE", KEYS[1], 1000, "LT"), redis.call("PEXPIRE", KEYS[1], 3000, "NX"), redis.call("PEXPIRE", KEYS[1], 3000, "XX")}',
    setup: [["SET", "k", "v", "PX", "9000"]],
  },
  {
    name: "PEXPIRE GT, XX, NX, LT on a key without TTL",
    lua: 'return {redis.call("PEXPIRE", KEYS[1], 5000, "GT"), redis.call("PEXPIRE", KEYS[1], 5000, "XX"), redis.call("PEXPIRE", KEYS[1], 5000, "NX"), redis.call("PEXPIRE", KEYS[1], 6000, "LT")}',
    setup: [["SET", "k", "v"]],
  },
  {
    name: "PEXPIRE LT on a key without TTL, on an absent key",
    lua: 'return {redis.call("PEXPIRE", KEYS[1], 6000, "LT"), redis.call("PEXPIRE", KEYS[2], 6000, "LT")}',
    setup: [["SET", "k", "v"]],
  },
  { name: "PEXPIRE NX XX", lua: 'return redis.pcall("PEXPIRE", KEYS[1], 10, "NX", "XX")' },
  { name: "PEXPIRE GT LT", lua: 'return redis.pcall("PEXPIRE", KEYS[1], 10, "GT", "LT")' },
  { name: "PEXPIRE unknown option", lua: 'return redis.pcall("PEXPIRE", KEYS[1], 10, "FOO")' },
  { name: "ZADD empty score", lua: 'return redis.pcall("ZADD", KEYS[2], "", "m")' },
  { name: "ZADD score with a blank", lua: 'return redis.pcall("ZADD", KEYS[2], " 1", "m")' },
  { name: "ZADD nan", lua: 'return redis.pcall("ZADD", KEYS[2], "nan", "m")' },
  {
    name: "ZADD inf, exponent, leading point",
    lua: 'return {redis.call("ZADD", KEYS[2], "inf", "a"), redis.call("ZADD", KEYS[2], "1e3", "b"), redis.call("ZADD", KEYS[2], ".5", "c"), redis.call("ZADD", KEYS[2], "-inf", "d")}',
  },
  // Lua 5.3 where 5.1 differs, and numbers a client cannot get as integers.
  { name: "string.format %s of a boolean", lua: 'return string.format("%s", true)' },
  { name: "string.format %s of nil", lua: 'return string.format("%s|%s", "a", nil)' },
  { name: "string.format %s of a table", lua: 'return string.format("%s", {})' },
  {
    name: "string.rep has no separator",
    lua: 'return string.rep("ab", 3, ",") .. string.rep("x", 2.9) .. string.rep("y", -1)',
  },
  { name: "string.rep without a count", lua: 'return string.rep("ab")' },
  { name: "load takes a function", lua: 'return {tostring(pcall(load, "return 1")), type(load)}' },
  { name: "load of a string", lua: 'return load("return 1")' },
  {
    name: "load of a reader",
    lua: 'local done = false return load(function() if done then return nil end done = true return "return 7" end)()',
  },
  { name: "a huge number as the result", lua: "return 1e300", exact: true },
  {
    name: "inf and nan as the result",
    lua: "return {1/0, -1/0, 0/0, -1e300, 2^63, -2^63, 2^62, -0}",
    exact: true,
  },
  {
    name: "cjson.encode of a table holding itself",
    lua: "local t = {} t.t = t return cjson.encode(t)",
  },
  {
    name: "string.format %d of what 64 bits cannot hold",
    lua: 'return string.format("%d %d %d %x %d %x %u %o %X %x %u", 2^63, 1e100, 0/0, 2^64, -2^63, -1, -1, 2^63, 0/0, 2^63 + 2^11, -1e300)',
  },
  ...[
    ["a", "b"],
    ["0", "b", "WITHSCORES"],
    ["a", "1", "FOO"],
    ["0", "-1", "withscores"],
    ["-100", "100"],
    ["1", "0"],
  ].map((bounds) => ({
    name: `ZRANGE ${bounds.join(" ")}`,
    lua: "return redis.pcall('ZRANGE', KEYS[2], unpack(ARGV))",
    args: bounds,
    setup: [
      ["ZADD", "z", "1", "a"],
      ["ZADD", "z", "2", "b"],
    ],
  })),
  // SET's and ZADD's options, as users' scripts write them.
  ...[
    ["v", "NX", "PX", "1000"],
    ["v", "nx", "px", "1000"],
    ["v", "EX", "10"],
    ["v", "XX"],
    ["v", "XX", "GET"],
    ["v", "NX", "GET"],
    ["v", "GET", "EX", "10"],
    ["v", "KEEPTTL"],
    ["v", "KEEPTTL", "XX"],
    ["v", "PXAT", "$far"],
    ["v", "EXAT", "4102444800"],
    ["v", "EX", "10", "EX", "20"],
    ["v", "NX", "XX"],
    ["v", "EX", "10", "PX", "1000"],
    ["v", "KEEPTTL", "PX", "1000"],
    ["v", "PX"],
    ["v", "PX", "0"],
    ["v", "EX", "-1"],
    ["v", "PX", "abc"],
    ["v", "PX", "1.5"],
    ["v", "EX", "9223372036854775807"],
    ["v", "PX", "9223372036854775000"],
    ["v", "FOO"],
  ].flatMap((options) =>
    [
      ["absent", []],
      ["held", [["SET", "k", "old", "PX", "9000"]]],
      ["a sorted set", [["ZADD", "k", "1", "m"]]],
    ].map(([state, setup]) => ({
      name: `SET ${options.join(" ")} on ${state as string}`,
      lua: "return redis.pcall('SET', KEYS[1], unpack(ARGV))",
      args: options,
      setup: setup as string[][],
    })),
  ),
  ...[
    ["1", "a", "2", "b", "3", "c"],
    ["NX", "5", "a", "6", "d"],
    ["XX", "5", "a", "6", "d"],
    ["XX", "CH", "5", "a", "6", "d"],
    ["CH", "1", "a", "9", "b", "4", "e"],
    ["GT", "CH", "0", "a", "9", "b", "7", "f"],
    ["LT", "0", "a", "9", "b"],
    ["XX", "GT", "0", "a", "9", "b"],
    ["INCR", "2.5", "a"],
    ["INCR", "2.5", "nope"],
    ["NX", "INCR", "2.5", "a"],
    ["GT", "INCR", "-1", "a"],
    ["NX", "XX", "1", "a"],
    ["NX", "GT", "1", "a"],
    ["GT", "LT", "1", "a"],
    ["INCR", "1", "a", "2", "b"],
    ["1", "a", "2"],
    ["NX"],
    ["1", "a", "x", "b"],
    ["nx", "ch", "1", "a", "2", "z"],
  ].flatMap((args) =>
    [
      ["absent", []],
      [
        "a sorted set",
        [
          ["ZADD", "z", "1", "a"],
          ["ZADD", "z", "2", "b"],
        ],
      ],
      ["a string", [["SET", "z", "s"]]],
    ].map(([state, setup]) => ({
      name: `ZADD ${args.join(" ")} on ${state as string}`,
      lua: "return redis.pcall('ZADD', KEYS[2], unpack(ARGV))",
      args,
      setup: setup as string[][],
    })),
  ),
  {
    name: "ZADD INCR to NaN",
    lua: "return redis.pcall('ZADD', KEYS[2], 'INCR', '-inf', 'a')",
    setup: [["ZADD", "z", "inf", "a"]],
  },
  ...[
    "9007199254740993",
    "007",
    "+5",
    " 5",
    "-0",
    "-9223372036854775808",
    "9223372036854775806",
    "9223372036854775807",
    "9223372036854775808",
    "1e3",
    "",
  ].map((value) => ({
    name: `INCR on ${JSON.stringify(value)}`,
    lua: "local r = redis.pcall('INCR', KEYS[1]) return {type(r) == 'table' and r.err or tostring(r), redis.call('GET', KEYS[1])}",
    setup: [["SET", "k", value]],
  })),
  // A Lua number argument is written with %.17g, as Redis 7.0 writes it.
  ...[
    ["0.1", "1e20", "-0", "1/3", "1e-5", "2^63", "123456789012345678"],
    ["1/0", "-1/0", "0/0", "5", "-7", "2^53 + 2", "1e300"],
  ].map((numbers) => ({
    name: `a number argument: ${numbers.join(", ")}`,
    lua: `local out = {} for i, n in ipairs({${numbers.join(", ")}}) do redis.call("SET", KEYS[1], n) out[i] = redis.call("GET", KEYS[1]) end return out`,
  })),
  // TIME: the node's clock as two texts, whole seconds and microseconds (its shape; the values
  // differ between two nodes' clocks), and Redis's arity.
  {
    name: "TIME's shape",
    lua: "local t = redis.call('TIME') return {#t, type(t[1]), type(t[2]), string.find(t[1], '^[1-9]%d*$') and 1 or 0, string.find(t[2], '^%d+$') and 1 or 0, tonumber(t[2]) < 1000000 and 1 or 0, string.len(t[2]) == string.len(tostring(tonumber(t[2]))) and 1 or 0}",
  },
  { name: "time in lower case", lua: "return #redis.call('time')" },
  { name: "TIME with an argument", lua: "return redis.pcall('TIME', 'now')" },
  { name: "TIME with an argument, raised", lua: "return redis.call('TIME', 'now')" },
  // ZRANGE's bounds as text: redis-server 7.0 may misread a number argument written after a
  // longer one (its cache of argument objects), which memory nodes do not reproduce.
  {
    name: "scores read back WITHSCORES and from ZPOPMIN",
    lua: 'for i, s in ipairs({0.1, 1e20, 1/3, 2^63, 1e-5, -0, 1e300, 123456789.125, "1e-300", "-0.5", "inf", "-inf", 1e17}) do redis.call("ZADD", KEYS[2], s, "m" .. i) end return {redis.call("ZRANGE", KEYS[2], "0", "-1", "WITHSCORES"), redis.call("ZPOPMIN", KEYS[2])}',
  },
  {
    name: "ZSCORE of odd scores",
    lua: 'local out = {} for i, s in ipairs({0.1, 1e20, 1/3, 2^63, 1e-5, 1e300, 123456789.125, "1e-300", "-0.5", "inf", "-inf", 1e17, "-0", "0", 2^53 + 1, "9007199254740993", -2^63, 5e-324, "-1e-320"}) do out[i] = {redis.call("ZADD", KEYS[2], s, "m" .. i), redis.call("ZSCORE", KEYS[2], "m" .. i)} end return out',
  },
  // A score as strtod reads it: hexadecimal too; refused when it overflows or underflows to zero.
  {
    name: "scores as strtod reads them",
    lua: 'local out = {} for i, s in ipairs(ARGV) do local r = redis.pcall("ZADD", KEYS[2], s, "m" .. i) out[i] = type(r) == "table" and r.err or redis.call("ZSCORE", KEYS[2], "m" .. i) end return out',
    args: [
      "0x10",
      "-0x1.8p1",
      "0X.8",
      "0x1p-1074",
      "0x1p-1080",
      "0x",
      "0x1p",
      "0x0p9999",
      "1e400",
      "-1e400",
      "1e-400",
      "0e-400",
      "1e-320",
      "Infinity",
      "-INF",
      "infin",
      "nan",
      "1e",
      ".5",
      "5.",
      "+.5e1",
    ],
  },
  {
    name: "ZSCORE after ZADD INCR",
    lua: 'redis.call("ZADD", KEYS[2], "INCR", 0.1, "m") redis.call("ZADD", KEYS[2], "INCR", 0.2, "m") return redis.call("ZSCORE", KEYS[2], "m")',
  },
  // Hashes and ZSCORE (a wait queue's record per waiter): each command with the arguments after its
  // key, on a key absent, a hash (with and without an expiry, which a change keeps), a string and a
  // sorted set; Redis's arity errors, WRONGTYPE, and an emptied hash deleted.
  ...[
    ["HSET", "a", "9"],
    ["HSET", "d", "4"],
    ["HSET", "a", "1", "d", "4", "d", "5"],
    ["HSET", "x", "1", "y"],
    ["HSET", "x"],
    ["HGET", "a"],
    ["HGET", "nope"],
    ["HGET"],
    ["HGET", "a", "b"],
    ["HDEL", "a"],
    ["HDEL", "a", "a", "nope"],
    ["HDEL", "c", "b", "a"],
    ["HDEL", "nope"],
    ["HDEL"],
    ["HLEN"],
    ["HLEN", "a"],
    ["HEXISTS", "a"],
    ["HEXISTS", "nope"],
    ["HEXISTS"],
    ["HGETALL"],
    ["HGETALL", "a"],
    ["ZSCORE", "m"],
    ["ZSCORE", "nope"],
    ["ZSCORE"],
    ["ZSCORE", "m", "n"],
  ].flatMap(([command = "", ...args]) =>
    [
      ["absent", []],
      ["a hash", [["HSET", "k", "a", "1", "b", "2", "c", "3"]]],
      [
        "a hash with an expiry",
        [
          ["HSET", "k", "a", "1", "b", "2", "c", "3"],
          ["PEXPIRE", "k", "9000"],
        ],
      ],
      ["a string", [["SET", "k", "s"]]],
      ["a sorted set", [["ZADD", "k", "1", "m"]]],
    ].map(([state, setup]) => ({
      name: `${[command, ...args].join(" ")} on ${state as string}`,
      lua: `return redis.pcall('${command}', KEYS[1], unpack(ARGV))`,
      args,
      setup: setup as string[][],
    })),
  ),
  ...["GET", "INCR", "ZCARD", "TYPE", "EXISTS", "PTTL", "DEL"].map((command) => ({
    name: `${command} on a hash`,
    lua: `return redis.pcall('${command}', KEYS[1])`,
    setup: [["HSET", "k", "a", "1"]],
  })),
  ...[
    ["SET", "v", "GET"],
    ["SET", "v"],
    ["ZADD", "1", "m"],
    ["ZRANGE", "0", "-1"],
    ["ZREM", "m"],
    ["ZPOPMIN"],
    ["PEXPIRE", "5000"],
    ["PEXPIRE", "0"],
  ].map(([command = "", ...args]) => ({
    name: `${[command, ...args].join(" ")} on a hash`,
    lua: `return redis.pcall('${command}', KEYS[1], unpack(ARGV))`,
    args,
    setup: [["HSET", "k", "a", "1"]],
  })),
  {
    name: "HGETALL: insertion order, an update in place, a field deleted and set again at the end",
    lua: "redis.call('HSET', KEYS[1], 'b', '1', 'a', '2', '10', '3', '9', '4') redis.call('HSET', KEYS[1], 'a', 'x') redis.call('HDEL', KEYS[1], 'b') redis.call('HSET', KEYS[1], 'b', 'y', 'c', 0.1) return redis.call('HGETALL', KEYS[1])",
  },
  {
    name: "an emptied hash is deleted with its expiry: HSET then makes one without",
    lua: "local out = {redis.call('HDEL', KEYS[1], 'a', 'b'), redis.call('EXISTS', KEYS[1]), redis.call('TYPE', KEYS[1]).ok} out[4] = redis.call('HSET', KEYS[1], 'n', 'v') out[5] = redis.call('PTTL', KEYS[1]) return out",
    setup: [
      ["HSET", "k", "a", "1", "b", "2"],
      ["PEXPIRE", "k", "9000"],
    ],
  },
  {
    name: "a hash's replies as Lua values: nil is false, integers numbers, HGETALL a table",
    lua: "local all = redis.call('HGETALL', KEYS[1]) return {type(redis.call('HGET', KEYS[1], 'x')), type(redis.call('HLEN', KEYS[1])), #all, all[1], type(redis.call('ZSCORE', KEYS[2], 'm'))}",
    setup: [["HSET", "k", "f", "v", "g", ""]],
  },
  {
    name: "HGET on a string, uncaught",
    lua: "return redis.call('HGET', KEYS[1], 'a')",
    setup: [["SET", "k", "s"]],
  },
  {
    name: "HSET odd arguments, uncaught",
    lua: "return redis.call('HSET', KEYS[1], 'a', '1', 'b')",
  },
  {
    name: "ZSCORE on a hash, uncaught",
    lua: "return redis.call('ZSCORE', KEYS[1], 'm')",
    setup: [["HSET", "k", "a", "1"]],
  },
];

describe("a user's script: memory node = redis-server", () => {
  it.each(USER_CASES.map((c) => [c.name, c] as const))("%s", async (_, c) => {
    const prefix = `user:${counter++}:`;
    const real = dev.direct(0);
    const now = Date.now();
    const name = (key: string) => `${prefix}${key}`;
    const keys = ["k", "z"].map(name);
    const sim = new SimNode({ now: () => now, sha1 });
    for (const [cmd = "", key = "", ...rest] of c.setup ?? []) {
      sim.command([cmd, name(key), ...rest]);
      await real.call(cmd, name(key), ...rest);
    }
    const args = (c.args ?? []).map((a) => a.replace("$far", String(now + 60_000)));
    const simResult = sim.eval(c.lua, keys, args);
    const simReply = simResult.ok ? { value: simResult.value } : { error: simResult.error };
    const client = c.exact ? real.duplicate({ stringNumbers: true }) : real;
    const realReply = await client.eval(c.lua, keys.length, ...keys, ...args).then(
      (value) => ({ value }),
      (error: Error) => ({ error: error.message }),
    );
    if (client !== real) client.disconnect();
    if (c.exact && "value" in simReply) simReply.value = exactText(simReply.value);
    expect(simReply).toEqual(realReply);
    for (const key of keys) {
      const type = await real.type(key);
      expect(sim.type(key), `type of ${key}`).toBe(type);
      if (type === "string") expect(sim.get(key), key).toBe(await real.get(key));
      if (type === "zset") {
        const flat = await real.zrange(key, 0, -1, "WITHSCORES");
        expect(sim.command(["ZRANGE", key, "0", "-1", "WITHSCORES"]), key).toEqual(flat);
      }
      if (type === "hash") expect(sim.command(["HGETALL", key]), key).toEqual(await hgetall(key));
      const realPttl = await real.pttl(key);
      const simPttl = sim.pttl(key);
      if (realPttl < 0) expect(simPttl, `pttl of ${key}`).toBe(realPttl);
      else expect(simPttl - realPttl, `pttl of ${key}`).toBeGreaterThanOrEqual(0);
      if (realPttl >= 0) expect(simPttl - realPttl).toBeLessThanOrEqual(Date.now() - now + 50);
    }
  });
});

/**
 * A script running past its time limit: redis-server answers other clients BUSY, and `SCRIPT KILL`
 * from one of them stops it; a memory node has no other client, so it stops the script itself
 * once past its limit (5 s by default, Redis's `lua-time-limit`). Both with a limit of 100 ms
 * here: the caller must see the same error from both.
 */
describe("a script past its time limit: memory node = redis-server stopped by SCRIPT KILL", () => {
  const LOOPS = [
    ["an endless loop", "local i = 0\nwhile true do\n  i = i + 1\nend"],
    [
      "pcall cannot keep it running",
      "while true do\n  pcall(function() while true do end end)\nend",
    ],
  ] as const;
  it.each(LOOPS)("%s", async (_, source) => {
    const sim = new SimNode({ now: () => Date.now(), sha1, scriptTimeLimitMs: 100 });
    const simResult = sim.eval(source, [], []);
    const real = dev.direct(0);
    const killer = real.duplicate();
    await killer.ping(); // connected before the server is busy
    const [, limit = "5000"] = (await real.config("GET", "lua-time-limit")) as string[];
    await real.config("SET", "lua-time-limit", "100");
    try {
      const running = real.eval(source, 0).then(
        (value) => ({ value }),
        (error: Error) => ({ error: error.message }),
      );
      // SCRIPT KILL answers NOTBUSY until the script is past lua-time-limit.
      for (;;) {
        const answer = await killer.script("KILL").then(String, (e: Error) => e.message);
        if (answer === "OK") break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const realReply = await running;
      expect("error" in realReply ? realReply.error : "").toMatch(/^ERR Script killed by user/);
      expect(simResult.ok ? { value: simResult.value } : { error: simResult.error }).toEqual(
        realReply,
      );
    } finally {
      await real.config("SET", "lua-time-limit", limit);
      killer.disconnect();
    }
  });
});
