/**
 * Memory nodes as the `nodes` of `createLocks`: edgelock's scripts run in-process on independent
 * keyspaces, the EVALSHA → NOSCRIPT → EVAL path works as on Redis, a command the node lacks is a
 * typed error naming it, a manual clock expires keys on demand, and `wake: true` hears releases
 * through the nodes' own channels.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isLockBusyError, isTransportError } from "../../src/errors";
import { createLocks } from "../../src/index";
import { ACQUIRE, RELEASE } from "../../src/scripts";
import {
  MemoryNodeError,
  manualClock,
  memoryNode,
  memoryNodes,
  UnsupportedCommandError,
} from "../../src/testing";

describe("a quorum of three memory nodes", () => {
  it("grants a lock on every node with the lease as PTTL, refuses a second caller, and release frees every node", async () => {
    const clock = manualClock();
    const nodes = memoryNodes(3, { clock });
    const locks = createLocks({ nodes });
    const lock = await locks.acquire("job", { lease: 5_000 });
    for (const node of nodes) {
      expect(node.get("lock:job")).toBe(lock.token);
      expect(node.pttl("lock:job")).toBe(5_000);
    }
    expect(await locks.tryAcquire("job")).toBeNull();
    const error = await locks.acquire("job").catch((e: unknown) => e);
    expect(isLockBusyError(error)).toBe(true);
    await lock.release();
    for (const node of nodes) expect(node.pttl("lock:job")).toBe(-2);
    expect(await locks.tryAcquire("job")).not.toBeNull();
  });

  it("extend sets every node's PTTL to the new lease", async () => {
    const clock = manualClock();
    const nodes = memoryNodes(3, { clock });
    const lock = await createLocks({ nodes }).acquire("job", { lease: 1_000 });
    clock.advance(400);
    expect(nodes.map((n) => n.pttl("lock:job"))).toEqual([600, 600, 600]);
    await lock.extend(8_000);
    expect(nodes.map((n) => n.pttl("lock:job"))).toEqual([8_000, 8_000, 8_000]);
  });

  it("keeps the nodes independent: a key written on one is absent on the others", async () => {
    const nodes = memoryNodes(3);
    const [a, b, c] = nodes;
    a?.command(["SET", "lock:job", "someone", "PX", "60000"]);
    expect(b?.keys()).toEqual([]);
    // One of three holds it: the majority still grants.
    const lock = await createLocks({ nodes }).acquire("job", { lease: 5_000 });
    expect([b?.get("lock:job"), c?.get("lock:job")]).toEqual([lock.token, lock.token]);
    expect(a?.get("lock:job")).toBe("someone");
  });

  it("a lock's keys expire when the manual clock passes the lease, and another caller gets it", async () => {
    const clock = manualClock();
    const nodes = memoryNodes(3, { clock });
    const locks = createLocks({ nodes });
    await locks.acquire("job", { lease: 5_000 });
    clock.advance(5_000);
    expect(nodes.map((n) => n.pttl("lock:job"))).toEqual([0, 0, 0]);
    expect(await locks.tryAcquire("job")).toBeNull();
    clock.advance(1);
    expect(nodes.map((n) => n.pttl("lock:job"))).toEqual([-2, -2, -2]);
    expect(await locks.tryAcquire("job")).not.toBeNull();
  });
});

describe("the script cache", () => {
  it("EVALSHA of a script the node has not seen rejects with Redis's NOSCRIPT reply", async () => {
    const node = memoryNode();
    const error = (await node
      .evalsha(RELEASE.sha1, ["k", "f", "w"], ["t"])
      .catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(MemoryNodeError);
    expect(error.name).toBe("UpstashError");
    expect(error.message).toBe("NOSCRIPT No matching script. Please use EVAL.");
    await node.eval(RELEASE.lua, ["k", "f", "w"], ["t"]);
    expect(await node.evalsha(RELEASE.sha1, ["k", "f", "w"], ["t"])).toBe(0);
  });

  it("a script of the user's own is cached under its SHA-1, as Redis does", async () => {
    const node = memoryNode();
    const source = "return tonumber(ARGV[1]) + 1";
    const sha = createHash("sha1").update(source).digest("hex");
    await expect(node.evalsha(sha, [], ["1"])).rejects.toThrow(/^NOSCRIPT/);
    expect(await node.eval(source, [], ["1"])).toBe(2);
    expect(await node.evalsha(sha, [], ["41"])).toBe(42);
  });

  it("after a SCRIPT FLUSH edgelock's EVALSHA falls back to one EVAL and the lock is granted", async () => {
    const nodes = memoryNodes(3);
    const calls: string[] = [];
    for (const node of nodes) {
      const run = node.eval.bind(node);
      const runSha = node.evalsha.bind(node);
      node.eval = (...a) => {
        calls.push("eval");
        return run(...a);
      };
      node.evalsha = (...a) => {
        calls.push("evalsha");
        return runSha(...a);
      };
    }
    const locks = createLocks({ nodes });
    await (await locks.acquire("a")).release();
    calls.length = 0;
    for (const node of nodes) node.flushScripts();
    const lock = await locks.acquire("b");
    expect(calls.sort()).toEqual(["eval", "eval", "eval", "evalsha", "evalsha", "evalsha"]);
    expect(nodes.map((n) => n.get("lock:b"))).toEqual([lock.token, lock.token, lock.token]);
  });
});

describe("commands a memory node does not implement", () => {
  it("called directly: an UnsupportedCommandError naming the command", () => {
    const node = memoryNode();
    let error: unknown;
    try {
      node.command(["sadd", "s", "m"]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnsupportedCommandError);
    expect((error as UnsupportedCommandError).command).toBe("SADD");
    expect((error as Error).message).toContain("unknown command 'SADD'");
  });

  it("called by a script: the script's error is an UnsupportedCommandError naming the command", async () => {
    const node = memoryNode();
    const error = await node
      .eval("return redis.call('SADD', KEYS[1], 'm')", ["s"], [])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedCommandError);
    expect((error as UnsupportedCommandError).command).toBe("SADD");
    // Redis 7's form of a script's error: where it was raised, after the command's own error.
    expect((error as Error).message).toMatch(
      /^ERR unknown command 'SADD' \(a memory node .*\) script: [0-9a-f]{40}, on @user_script:1\.$/,
    );
  });

  it("through createLocks: the node's outcome is a TransportError of kind server naming the command", async () => {
    const node = memoryNode();
    // A node whose scripts all call a command it lacks (as a script of a newer edgelock might).
    const evalOf = node.eval.bind(node);
    const run = (script: string) => evalOf(`redis.call('GETEX', 'k') ${script}`, [], []);
    node.eval = (script) => run(script);
    node.evalsha = () => run("");
    const error = await createLocks({ nodes: [node] })
      .acquire("job")
      .catch((e: unknown) => e);
    const outcome = (error as { outcomes?: { error?: unknown }[] }).outcomes?.[0]?.error;
    expect(isTransportError(outcome)).toBe(true);
    expect(outcome).toMatchObject({ kind: "server" });
    expect((outcome as Error).message).toContain("unknown command 'GETEX'");
  });

  it("answers the commands edgelock's scripts use as Redis does (status text, nil as null)", () => {
    const node = memoryNode();
    expect(node.command(["SET", "k", "v", "PX", "1000"])).toBe("OK");
    expect(node.command(["GET", "k"])).toBe("v");
    expect(node.command(["GET", "absent"])).toBeNull();
    expect(node.command(["ZADD", "z", "1", "m"])).toBe(1);
    expect(node.command(["ZRANGE", "z", "0", "-1", "WITHSCORES"])).toEqual(["m", "1"]);
    expect(() => node.command(["GET", "z"])).toThrow(/^WRONGTYPE/);
    expect(node.command(["ZSCORE", "z", "m"])).toBe("1");
  });

  it("answers hash commands as Redis does: insertion order, an emptied hash deleted", () => {
    const node = memoryNode();
    expect(node.command(["HSET", "h", "b", "1", "a", "2", "b", "3"])).toBe(2);
    expect(node.command(["HGETALL", "h"])).toEqual(["b", "3", "a", "2"]);
    expect([node.command(["HGET", "h", "a"]), node.command(["HGET", "h", "x"])]).toEqual([
      "2",
      null,
    ]);
    expect([node.command(["HLEN", "h"]), node.command(["HEXISTS", "h", "b"])]).toEqual([2, 1]);
    expect(node.command(["TYPE", "h"])).toBe("hash");
    expect(() => node.command(["HSET", "h", "c"])).toThrow(
      "ERR wrong number of arguments for 'hset' command",
    );
    expect(() => node.command(["GET", "h"])).toThrow(/^WRONGTYPE/);
    expect(node.command(["HDEL", "h", "a", "b", "x"])).toBe(2);
    expect(node.keys()).toEqual([]);
  });
});

describe("a user's script, as redis-server runs it", () => {
  it("an integer reply is a Lua 5.1 number: concatenated without a fraction", async () => {
    const [node] = memoryNodes(1);
    const script = 'return "job-" .. redis.call("INCR", KEYS[1]) .. string.format(" %d", 3.7)';
    expect(await node?.eval(script, ["jobs"], [])).toBe("job-1 3");
  });

  it("each node is its own sandbox: a global is refused, and no node sees what a script tried on another", async () => {
    const [a, b] = memoryNodes(2);
    await expect(a?.eval("x = 1 return 1", [], [])).rejects.toThrow(
      /^ERR user_script:1: Attempt to modify a readonly table script: [0-9a-f]{40}, on @user_script:1\.$/,
    );
    await expect(a?.eval("setmetatable(_G, {}) return 1", [], [])).rejects.toThrow(
      "Attempt to modify a readonly table",
    );
    for (const node of [a, b]) {
      await expect(node?.eval("return x", [], [])).rejects.toThrow(
        "Script attempted to access nonexistent global variable 'x'",
      );
    }
  });

  it("bytes that are not UTF-8 reach the test as U+FFFD, as a client reading UTF-8 gets them", async () => {
    const node = memoryNode();
    expect(await node.eval('return "a\\255"', [], [])).toBe("a\uFFFD");
    await expect(node.eval('error("\\255")', [], [])).rejects.toThrow(
      "ERR user_script:1: \uFFFD script:",
    );
  });

  it("what memory nodes do not model is refused by name: redis.sha1hex (no synchronous SHA-1), bit", async () => {
    const node = memoryNode();
    for (const [script, name] of [
      ['return redis.sha1hex("a")', "redis.sha1hex"],
      ["return bit.band(1, 3)", "bit"],
      ["return redis.setresp(3)", "redis.setresp(3)"],
    ]) {
      const error = await node.eval(script as string, [], []).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnsupportedCommandError);
      expect((error as UnsupportedCommandError).command).toBe(name);
      expect((error as Error).message).toContain(`memory nodes do not model '${name}'`);
    }
  });
});

describe("the wait queue on memory nodes", () => {
  it("a waiter queued on memory nodes is handed the key by the release, long before its next look", async () => {
    const nodes = memoryNodes(3);
    // Once queued, the waiter would look again only after a minute (retryDelayMax, and the
    // holder's lease): only the hand-off messages can grant it within the test's time.
    const options = { lease: 60_000, retryDelayMax: 60_000 };
    const holder = await createLocks({ nodes, ...options }).acquire("job");
    const order: string[] = [];
    const waiter = createLocks({ nodes, ...options })
      .acquire("job", { wait: 120_000 })
      .then((lock) => {
        order.push("waiter granted");
        return lock;
      });
    // The queue is a hash: one field per waiting call (its token), beside the holder's `^`.
    const queued = () =>
      nodes.every((node) =>
        (node.command(["HGETALL", "lock:job:wait"]) as string[]).some(
          (item, i) => i % 2 === 0 && item !== "^",
        ),
      );
    for (let i = 0; i < 400 && !queued(); i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(queued()).toBe(true);
    order.push("released");
    await holder.release();
    const lock = await waiter;
    expect(order).toEqual(["released", "waiter granted"]);
    expect(nodes.map((n) => n.get("lock:job"))).toEqual([lock.token, lock.token, lock.token]);
  });
});

describe("options", () => {
  it("reject an unknown option, a clock without now(), a bad count and a backwards advance, naming each", () => {
    expect(() => memoryNode({ clok: 1 } as never)).toThrow(/`clok`/);
    expect(() => memoryNode({ clock: {} as never })).toThrow(/`clock`/);
    expect(() => memoryNodes(0)).toThrow(/`count`/);
    expect(() => memoryNodes(1.5)).toThrow(/`count`/);
    expect(() => memoryNodes("3" as never)).toThrow('got "3"');
    expect(() => manualClock().advance(-1)).toThrow(/`ms`/);
    expect(() => manualClock(Number.NaN)).toThrow(/`start`/);
  });

  it("a clock with fractional milliseconds still gives whole-millisecond PTTLs, as Redis does", () => {
    const node = memoryNode({ clock: { now: () => 1_000.75 } });
    node.command(["SET", "k", "v", "PX", "100"]);
    expect(node.pttl("k")).toBe(100);
  });

  it("the default clock is real time: a key set with PX 1000 reports a PTTL of at most 1000", () => {
    const node = memoryNode();
    node.command(["SET", "k", "v", "PX", "1000"]);
    const pttl = node.pttl("k");
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(1_000);
  });

  it("runs edgelock's ACQUIRE exactly as published (its SHA-1 is the node's cache key)", async () => {
    const node = memoryNode();
    await node.eval(ACQUIRE.lua, ["k", "k:fence", "k:wait"], ["t", "1000", "0"]);
    expect(
      await node.evalsha(ACQUIRE.sha1, ["k", "k:fence", "k:wait"], ["t", "1000", "0"]),
    ).toEqual(expect.any(Array));
  });
});
