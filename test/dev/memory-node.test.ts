/**
 * A dev cluster on the in-memory backend: the same faults and process controls as on redis-server
 * (pause holds requests back, kill answers 503 and ends streams, restart comes back empty), the SSE
 * routes, a lock round through `createLocks`, and the operator commands' `inspect` and
 * `force-release` — all through the unmodified `@upstash/redis` client and the REST endpoint.
 */
import { errors } from "@upstash/redis";
import { afterEach, describe, expect, it } from "vitest";
import { forceRelease, inspect } from "../../src/dev/cli/operator";
import { startDevCluster } from "../../src/dev/index";
import { createLocks } from "../../src/index";
import { ACQUIRE } from "../../src/scripts";
import { uniqueKey, useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3, backend: "memory" });
const node = (i = 0) => {
  const control = dev.cluster.controls[i];
  if (control === undefined) throw new Error(`no node ${i}`);
  return control;
};
const fastRetry = { retry: { retries: 1, backoff: () => 10 } };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(() => {
  for (const control of dev.cluster.controls) {
    control.clearFaults();
    control.resume();
    control.resetStats();
  }
});

describe("a memory cluster", () => {
  it("says what runs it, and has no redis-server to connect to", () => {
    expect([dev.cluster.backend, dev.cluster.backendReason]).toEqual(["memory", "asked for"]);
    expect(dev.cluster.controls.map((c) => [c.backend, c.redisUrl])).toEqual([
      ["memory", "memory://node-0"],
      ["memory", "memory://node-1"],
      ["memory", "memory://node-2"],
    ]);
  });

  it("refuses options it cannot honour, naming them", async () => {
    await expect(startDevCluster({ backend: "memory", persistence: "aof" })).rejects.toThrow(
      'option "persistence" "aof" needs redis-server',
    );
    await expect(startDevCluster({ backend: "bogus" as "memory" })).rejects.toThrow(
      'option "backend" must be "auto", "redis" or "memory" (got "bogus")',
    );
    await expect(node().restart({ keepData: true })).rejects.toThrow(
      "an in-memory node always restarts empty",
    );
  });

  it("answers a command it does not implement with Redis's unknown-command error, naming it", async () => {
    const redis = dev.client(0);
    const error = await redis.sadd(uniqueKey("s"), "m", "n").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.UpstashError);
    expect((error as Error).message).toMatch(
      /ERR unknown command 'sadd', with args beginning with: '.*' 'm' 'n' \(not implemented by the in-memory dev node; .*edgelock dev --redis\)$/,
    );
  });
});

describe("faults and controls on a memory node", () => {
  it("noscript, status, reset-before and reset-after, as on redis-server", async () => {
    const redis = dev.client(0, fastRetry);
    const key = uniqueKey("faults");
    await redis.eval(ACQUIRE.lua, [key, `${key}:f`, `${key}:w`], ["t", "5000", "0"]);
    node().inject({ kind: "noscript", count: 1 });
    await expect(
      redis.evalsha(ACQUIRE.sha1, [key, `${key}:f`, `${key}:w`], ["t", "5000", "0"]),
    ).rejects.toThrow("NOSCRIPT No matching script. Please use EVAL.");
    expect(
      await redis.evalsha(ACQUIRE.sha1, [key, `${key}:f`, `${key}:w`], ["t", "5000", "0"]),
    ).toEqual([1, 0, -1]);

    node().inject({ kind: "status", status: 502, count: 1 });
    await expect(dev.client(0, { retry: false }).get(key)).rejects.toThrow();

    node().inject({ kind: "reset-before", command: "set", count: 2 });
    await expect(redis.set(`${key}:b`, "v")).rejects.toThrow("fetch failed");
    expect(await redis.exists(`${key}:b`)).toBe(0); // never ran

    node().inject({ kind: "reset-after", command: "set", count: 1 });
    expect(await redis.set(`${key}:a`, "v", { nx: true })).toBeNull(); // the retry found it
    expect(await redis.get(`${key}:a`)).toBe("v");
  });

  it("latency delays, hang never answers; the node keeps serving", async () => {
    const key = uniqueKey("slow");
    node().inject({ kind: "latency", ms: 150, command: "get", count: 1 });
    const redis = dev.client(0, { enableAutoPipelining: false });
    const t0 = performance.now();
    await redis.get(key);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    node().inject({ kind: "hang", count: 1 });
    const hung = dev.client(0, { retry: false, signal: () => AbortSignal.timeout(100) });
    await expect(hung.get(key)).rejects.toMatchObject({ name: "TimeoutError" });
    expect(await redis.set(key, "v")).toBe("OK");
  });

  it("pause holds requests back and resume runs them in arrival order", async () => {
    const key = uniqueKey("pause");
    const redis = dev.client(0, { enableAutoPipelining: false });
    node().pause();
    const answers: string[] = [];
    const first = redis.set(key, "1").then(() => answers.push("set 1"));
    // The second is sent once the first reached the node, so the node saw them in this order.
    await expect.poll(() => node().stats().commands.set).toBe(1);
    const second = redis.set(key, "2").then(() => answers.push("set 2"));
    await expect.poll(() => node().stats().commands.set).toBe(2);
    await sleep(50);
    expect(answers).toEqual([]);
    expect(() => node().pause()).toThrow("cannot pause, the in-memory node is paused");
    node().resume();
    await Promise.all([first, second]);
    expect(answers.sort()).toEqual(["set 1", "set 2"]);
    expect(await redis.get(key)).toBe(2); // the later SET ran last
  });

  it("kill answers 503 until restart; the restarted node is empty, scripts and data", async () => {
    const redis = dev.client(1, { retry: false });
    const key = uniqueKey("kill");
    await redis.set(key, "v");
    await redis.eval(ACQUIRE.lua, [key, `${key}:f`, `${key}:w`], ["t", "5000", "0"]);
    await node(1).kill();
    const { url, token } = dev.cluster.nodes[1] ?? { url: "", token: "" };
    const res = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify(["get", key]),
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: string }).error).toContain("in-memory node is killed");
    expect(() => node(1).pause()).toThrow("cannot pause, the in-memory node is killed");
    await node(1).restart();
    expect(await redis.get(key)).toBeNull();
    await expect(redis.evalsha(ACQUIRE.sha1, [key, "f", "w"], ["t", "5000", "0"])).rejects.toThrow(
      "NOSCRIPT",
    );
  });

  it("the admin routes drive it over HTTP: faults, pause, resume, restart", async () => {
    const { url, token } = dev.cluster.nodes[2] ?? { url: "", token: "" };
    const admin = (action: string, body?: unknown) =>
      fetch(`${url}/__edgelock/${action}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then(async (res) => [res.status, await res.json()]);
    expect(await admin("faults", { kind: "status", status: 500, count: 1 })).toEqual([
      200,
      { result: "OK" },
    ]);
    await expect(dev.client(2, { retry: false }).get("x")).rejects.toThrow();
    expect(await admin("pause")).toEqual([200, { result: "OK" }]);
    const held = dev.client(2).set("admin", "v");
    await sleep(50);
    expect(await admin("resume")).toEqual([200, { result: "OK" }]);
    expect(await held).toBe("OK");
    expect(await admin("restart", { delayMs: 10 })).toEqual([200, { result: "OK" }]);
    expect(await dev.client(2).get("admin")).toBeNull();
  });
});

describe("pub/sub on a memory node", () => {
  it("subscribe gets its count, then messages from PUBLISH and from a script, in order", async () => {
    const redis = dev.client(0);
    const channel = uniqueKey("ch");
    const events: unknown[] = [];
    const sub = redis.subscribe<unknown>(channel);
    sub.on("subscribe", (count) => events.push(["subscribe", count]));
    sub.on("message", ({ message }) => events.push(["message", message]));
    await expect.poll(() => events.length).toBe(1);
    const pattern = redis.psubscribe<unknown>(`${channel.slice(0, 6)}*`);
    await sleep(50);
    expect(await redis.publish(channel, "hello")).toBe(2); // the channel and the pattern
    await redis.eval("return redis.call('PUBLISH', KEYS[1], ARGV[1])", [channel], ["from lua"]);
    expect(await redis.publish(channel, "last")).toBe(2);
    await expect.poll(() => events.length).toBe(4);
    expect(events).toEqual([
      ["subscribe", 1],
      ["message", "hello"],
      ["message", "from lua"],
      ["message", "last"],
    ]);
    await sub.unsubscribe();
    await pattern.unsubscribe();
    await expect.poll(() => redis.publish(channel, "nobody")).toBe(0);
  });

  it("a pattern stream gets psubscribe, then pmessage with pattern and channel; kill ends it", async () => {
    const { url, token } = dev.cluster.nodes[1] ?? { url: "", token: "" };
    const res = await fetch(`${url}/psubscribe/news.*`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
      body: "[]",
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const text = res.text();
    await sleep(50);
    expect(await dev.client(1).publish("news.eu", "hi")).toBe(1);
    expect(await dev.client(1).publish("sport.eu", "no")).toBe(0);
    await sleep(50);
    await node(1).kill();
    expect(await text).toBe("data: psubscribe,news.*,1\n\ndata: pmessage,news.*,news.eu,hi\n\n");
    await node(1).restart();
  });
});

describe("locks and the operator commands on memory nodes", () => {
  it("a lock round; inspect shows it held on 3 of 3; force-release deletes it everywhere", async () => {
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix: "mem:" });
    const env = { EDGELOCK_NODES: JSON.stringify(dev.cluster.nodes) };
    await locks.using("invoice:7", async (lock) => {
      expect(lock.token).toMatch(/^[0-9a-f]{32}$/);
      const shown = await inspect(["invoice:7", "--prefix", "mem:"], env);
      expect(shown?.code).toBe(0);
      expect(shown?.out.at(-1)).toMatch(/^held on 3 of 3 nodes \(a majority\), free in at most/);
    });
    const held = await locks.acquire("invoice:8", { lease: 60_000 });
    const released = await forceRelease(["invoice:8", "--prefix", "mem:", "--yes"], env, {
      isTTY: false,
      ask: async () => "",
    });
    expect(released?.out.at(-1)).toBe("deleted on 3 of 3 nodes");
    expect((await locks.inspect("invoice:8")).held).toBe(false);
    await held.release();
  });
});
