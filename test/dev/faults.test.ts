// Each fault kind of the dev endpoint (docs/CLI.md "startDevCluster") produces the effect a real
// node's fault has on a client, observed through the unmodified @upstash/redis client against
// real redis-servers.
import { errors } from "@upstash/redis";
import { afterEach, describe, expect, it } from "vitest";
import { uniqueKey, useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 1 });
const node = () => {
  const control = dev.cluster.controls[0];
  if (control === undefined) throw new Error("no node 0");
  return control;
};
// Fast client: one retry after 10 ms instead of six attempts over ~4.4 s.
const fastRetry = { retry: { retries: 1, backoff: () => 10 } };

afterEach(() => {
  node().clearFaults();
  node().resetStats();
});

describe("faults seen through @upstash/redis", () => {
  it("latency + a client timeout → TimeoutError, no retry; the command still runs", async () => {
    const key = uniqueKey("latency");
    node().inject({ kind: "latency", ms: 1_000, command: "set", count: 1 });
    const redis = dev.client(0, { ...fastRetry, signal: () => AbortSignal.timeout(100) });
    await expect(redis.set(key, "v")).rejects.toMatchObject({ name: "TimeoutError" });
    expect(node().stats().requests).toBe(1);
    // The delayed request reaches Redis after the client gave up, as on a real slow network.
    await expect.poll(() => dev.direct(0).get(key), { timeout: 3_000 }).toBe("v");
  });

  it("latency ranges delay at least min and only hit the named command", async () => {
    node().inject({ kind: "latency", ms: [150, 250], command: "get" });
    const redis = dev.client(0, { enableAutoPipelining: false });
    const t0 = performance.now();
    await redis.ping();
    const fast = performance.now() - t0;
    const t1 = performance.now();
    await redis.get(uniqueKey("slow"));
    const slow = performance.now() - t1;
    expect(slow).toBeGreaterThanOrEqual(150);
    expect(slow).toBeGreaterThan(fast * 3);
  });

  it("reset-before → the client retries, then TypeError: fetch failed", async () => {
    const key = uniqueKey("reset");
    node().inject({ kind: "reset-before" });
    const redis = dev.client(0, fastRetry);
    await expect(redis.set(key, "v")).rejects.toThrow("fetch failed");
    expect(node().stats().requests).toBe(2); // first attempt + one retry
    expect(await dev.direct(0).exists(key)).toBe(0); // never ran
    node().clearFaults();
    node().inject({ kind: "reset-before", count: 1 });
    expect(await redis.set(key, "v")).toBe("OK"); // the retry got through
  });

  it("reset-after → the command ran; the retry re-applies it (SET NX answers null)", async () => {
    const key = uniqueKey("reset-after");
    node().inject({ kind: "reset-after", command: "set", count: 1 });
    const redis = dev.client(0, fastRetry);
    expect(await redis.set(key, "mine", { nx: true, px: 10_000 })).toBeNull();
    expect(await dev.direct(0).get(key)).toBe("mine");
    expect(node().stats().commands.set).toBe(2);
  });

  it("5xx with a JSON body → UpstashError at once, no retry", async () => {
    node().inject({ kind: "status", status: 503, count: 1 });
    const redis = dev.client(0, fastRetry);
    const error = await redis.get(uniqueKey("status")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.UpstashError);
    expect((error as Error).message).toMatch(/^ERR injected fault, command was: /);
    expect(node().stats().requests).toBe(1);
  });

  it("5xx with an HTML body → UpstashJSONParseError", async () => {
    node().inject({ kind: "status", status: 502, body: "<html>Bad Gateway</html>", count: 1 });
    const error = await dev
      .client(0)
      .get(uniqueKey("html"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.UpstashJSONParseError);
    expect((error as Error).message).toMatch(/<html>Bad Gateway/);
  });

  it("hang → the client times out; the request is dropped and the node keeps serving", async () => {
    const key = uniqueKey("hang");
    node().inject({ kind: "hang", count: 1 });
    const hung = dev.client(0, { ...fastRetry, signal: () => AbortSignal.timeout(200) });
    await expect(hung.set(key, "v")).rejects.toMatchObject({ name: "TimeoutError" });
    expect(await dev.direct(0).exists(key)).toBe(0);
    expect(await dev.client(0).set(key, "v")).toBe("OK");
  });

  it("noscript on EVALSHA → the client falls back to EVAL, one extra round trip", async () => {
    const redis = dev.client(0);
    const script = redis.createScript<number>("return tonumber(ARGV[1]) + 1");
    expect(await script.exec([], ["1"])).toBe(2); // loads it (EVALSHA miss → EVAL)
    node().resetStats();
    node().inject({ kind: "noscript", count: 1 });
    expect(await script.exec([], ["2"])).toBe(3);
    expect(node().stats()).toEqual({ requests: 2, commands: { evalsha: 1, eval: 1 } });
    expect(await script.exec([], ["3"])).toBe(4);
    expect(node().stats().commands).toEqual({ evalsha: 2, eval: 1 });
  });

  it("noscript answers only the EVALSHAs of a pipeline; the other commands run", async () => {
    const key = uniqueKey("noscript-pipe");
    node().inject({ kind: "noscript" });
    const pipeline = dev.client(0).pipeline();
    pipeline.set(key, "v").evalsha("a".repeat(40), [], []).get(key);
    expect(await pipeline.exec({ keepErrors: true })).toEqual([
      { result: "OK", error: undefined },
      { result: undefined, error: "NOSCRIPT No matching script. Please use EVAL." },
      { result: "v", error: undefined },
    ]);
  });

  it("counts down: the next N matching requests, then back to normal", async () => {
    node().inject({ kind: "status", status: 500, command: "incr", count: 2 });
    const redis = dev.client(0, { enableAutoPipelining: false });
    const key = uniqueKey("count");
    await expect(redis.get(key)).resolves.toBeNull(); // not targeted, not consumed
    await expect(redis.incr(key)).rejects.toThrow("injected");
    await expect(redis.incr(key)).rejects.toThrow("injected");
    await expect(redis.incr(key)).resolves.toBe(1);
  });

  it("rejects invalid faults with a message naming the field", () => {
    expect(() => node().inject({ kind: "latency", ms: [5, 1] })).toThrow(/"ms"/);
    expect(() => node().inject({ kind: "status", status: 99 })).toThrow(/"status"/);
    expect(() => node().inject({ kind: "hang", count: 0 })).toThrow(/"count"/);
    expect(() => node().inject({ kind: "nope" } as never)).toThrow(/"kind"/);
  });
});

describe("admin routes", () => {
  const admin = async (method: string, action: string, body?: unknown, token?: string) => {
    const { url, token: nodeToken } = dev.cluster.nodes[0] ?? { url: "", token: "" };
    const res = await fetch(`${url}/__edgelock/${action}`, {
      method,
      headers: { authorization: `Bearer ${token ?? nodeToken}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: (await res.json()) as unknown };
  };

  it("injects, lists and clears faults, and reads and resets stats", async () => {
    const injected = await admin("POST", "faults", [
      { kind: "status", status: 429, count: 1 },
      { kind: "latency", ms: 1, command: "ping" },
    ]);
    expect(injected).toEqual({ status: 200, json: { result: "OK" } });
    expect((await admin("GET", "faults")).json).toEqual({
      result: [
        { kind: "status", status: 429, count: 1 },
        { kind: "latency", ms: 1, command: "ping" },
      ],
    });
    await expect(dev.client(0).get(uniqueKey("admin"))).rejects.toThrow("injected");
    expect((await admin("GET", "stats")).json).toEqual({
      result: { requests: 1, commands: { get: 1 } },
    });
    expect((await admin("DELETE", "faults")).status).toBe(200);
    expect((await admin("DELETE", "stats")).status).toBe(200);
    expect((await admin("GET", "faults")).json).toEqual({ result: [] });
    expect(node().stats()).toEqual({ requests: 0, commands: {} });
  });

  it("validates bodies, routes, methods and the token", async () => {
    expect(await admin("POST", "faults", { kind: "latency" })).toMatchObject({
      status: 400,
      json: { error: /"ms"/ },
    });
    expect((await admin("POST", "explode")).status).toBe(404);
    expect((await admin("GET", "kill")).status).toBe(405);
    expect(await admin("GET", "stats", undefined, "wrong")).toEqual({
      status: 401,
      json: { error: "Unauthorized" },
    });
  });

  it("pauses and resumes the redis-server over HTTP", async () => {
    const key = uniqueKey("admin-pause");
    expect((await admin("POST", "pause")).status).toBe(200);
    let settled = false;
    const pending = dev
      .client(0)
      .set(key, "v")
      .finally(() => {
        settled = true;
      });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false);
    expect((await admin("POST", "resume")).status).toBe(200);
    expect(await pending).toBe("OK");
  });
});
