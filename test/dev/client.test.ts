// The unmodified @upstash/redis client is the oracle of the dev endpoint's conformance
// (docs/DETAILS.md "The local endpoint"): everything here goes through real redis-servers.
import { errors } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { uniqueKey, useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 2, maxBodyBytes: 64 * 1024 });

async function post(path: string, body: unknown, init: RequestInit = {}, node = 0) {
  const { url, token } = dev.cluster.nodes[node] ?? { url: "", token: "" };
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...init,
    headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as unknown };
}

describe("single commands", () => {
  for (const enableAutoPipelining of [true, false]) {
    it(`round-trip values with auto-pipelining ${enableAutoPipelining ? "on" : "off"}`, async () => {
      const redis = dev.client(0, { enableAutoPipelining });
      const key = uniqueKey("single");
      const [set, ping, incr] = await Promise.all([
        redis.set(key, "héllo wörld ✓ 🚀"),
        redis.ping(),
        redis.incr(`${key}:n`),
      ]);
      expect([set, ping, incr]).toEqual(["OK", "PONG", 1]);
      expect(await redis.get(key)).toBe("héllo wörld ✓ 🚀");
      expect(await redis.get(`${key}:missing`)).toBeNull();
      expect(await dev.direct(0).get(key)).toBe("héllo wörld ✓ 🚀");
    });
  }

  it("sends single commands to / when auto-pipelining is off, /pipeline when on", async () => {
    const control = dev.cluster.controls[1];
    control?.resetStats();
    await dev.client(1, { enableAutoPipelining: false }).ping();
    await dev.client(1).ping();
    expect(control?.stats()).toEqual({ requests: 2, commands: { ping: 2 } });
  });

  it("returns integers, floats as strings (parsed by the client), nested arrays with OK", async () => {
    const redis = dev.client(0);
    const key = uniqueKey("types");
    await redis.zadd(key, { score: 1.5, member: "m" });
    expect(await redis.zscore(key, "m")).toBe(1.5);
    expect(await redis.incrby(`${key}:i`, 41)).toBe(41);
    const nested = await redis.eval<[], unknown>(
      "return {1, 'x', {'OK', {2, 'OK'}}, 'OK'}",
      [],
      [],
    );
    expect(nested).toEqual([1, "x", ["OK", [2, "OK"]], "OK"]);
    await redis.hset(`${key}:h`, { a: "1", b: "two" });
    expect(await redis.hgetall(`${key}:h`)).toEqual({ a: 1, b: "two" });
  });

  it("keeps every digit of integers above 2^53 in the JSON", async () => {
    const key = uniqueKey("big");
    await dev.direct(0).set(key, "9007199254740993");
    const incr = await fetch(dev.cluster.nodes[0]?.url ?? "", {
      method: "POST",
      headers: { authorization: `Bearer ${dev.cluster.nodes[0]?.token}` },
      body: JSON.stringify(["incrby", key, 10]),
    });
    expect(await incr.text()).toBe('{"result":9007199254741003}');
    const res = await fetch(dev.cluster.nodes[0]?.url ?? "", {
      method: "POST",
      headers: { authorization: `Bearer ${dev.cluster.nodes[0]?.token}` },
      body: JSON.stringify(["get", key]),
    });
    expect(await res.text()).toBe('{"result":"9007199254741003"}');
  });

  it("base64-encodes the raw bytes of every string, at every depth, never the errors", async () => {
    const key = uniqueKey("b64");
    const headers = { "upstash-encoding": "base64" };
    await dev.direct(0).set(key, Buffer.from([0xff, 0x00, 0xc3, 0xa9]));
    expect((await post("/", ["get", key], { headers })).json).toEqual({ result: "/wDDqQ==" });
    expect((await post("/", ["set", key, "v"], { headers })).json).toEqual({ result: "T0s=" });
    const pipeline = await post("/pipeline", [["eval", "return {'OK', {'PONG'}}", 0], ["xx"]], {
      headers,
    });
    expect(pipeline.json).toEqual([
      { result: ["T0s=", ["UE9ORw=="]] },
      { error: "ERR unknown command 'xx', with args beginning with: " },
    ]);
  });

  it("round-trips non-ASCII and binary-like strings through the client", async () => {
    const redis = dev.client(0);
    const key = uniqueKey("bin");
    const values = ["\u0000\u0001\u007f", "日本語テキスト", "emoji 🧪 \u00e9", "OK", "=+/"];
    for (const [i, value] of values.entries()) await redis.set(`${key}:${i}`, value);
    const read = await redis.mget<string[]>(...values.map((_, i) => `${key}:${i}`));
    expect(read).toEqual(values);
  });

  it("answers a command error on / with 400 and the verbatim Redis text", async () => {
    const redis = dev.client(0, { enableAutoPipelining: false });
    await expect(redis.evalsha("0".repeat(40), [], [])).rejects.toThrow(
      "NOSCRIPT No matching script. Please use EVAL.",
    );
    const { status, json } = await post("/", ["get"]);
    expect(status).toBe(400);
    expect(json).toEqual({ error: "ERR wrong number of arguments for 'get' command" });
  });

  it("emits a fresh upstash-sync-token on every reply", async () => {
    const first = await post("/", ["ping"]);
    const second = await post("/", ["ping"]);
    const [a, b] = [first, second].map((r) => Number(r.headers.get("upstash-sync-token")));
    expect(b).toBeGreaterThan(a ?? 0);
    const redis = dev.client(0);
    await redis.ping();
    const token = redis.readYourWritesSyncToken;
    await redis.ping();
    expect(redis.readYourWritesSyncToken).not.toBe(token);
  });
});

describe("pipelines and transactions", () => {
  it("returns one entry per command with keepErrors, errors inline, HTTP 200", async () => {
    const key = uniqueKey("pipe");
    const pipeline = dev.client(0).pipeline();
    pipeline.set(key, "x").incr(key).get(key).lpush(key, "y");
    const results = await pipeline.exec({ keepErrors: true });
    expect(results).toEqual([
      { result: "OK", error: undefined },
      { result: undefined, error: "ERR value is not an integer or out of range" },
      { result: "x", error: undefined },
      {
        result: undefined,
        error: "WRONGTYPE Operation against a key holding the wrong kind of value",
      },
    ]);
    const raw = await post("/pipeline", [
      ["incr", key],
      ["incr", key],
    ]);
    expect(raw.status).toBe(200);
    expect(raw.json).toEqual([
      { error: "ERR value is not an integer or out of range" },
      { error: "ERR value is not an integer or out of range" },
    ]);
  });

  it("runs 1000 commands of one pipeline in order", async () => {
    const key = uniqueKey("many");
    const body = Array.from({ length: 1000 }, () => ["incr", key]);
    const { json } = await post("/pipeline", body);
    expect((json as { result: number }[]).map((e) => e.result)).toEqual(
      Array.from({ length: 1000 }, (_, i) => i + 1),
    );
  });

  it("runs multi() atomically with runtime errors inline", async () => {
    const key = uniqueKey("tx");
    const tx = dev.client(0).multi();
    tx.set(key, "1").incr(key).lpush(key, "x").get(key);
    const results = await tx.exec({ keepErrors: true });
    expect(results.map((r) => r.result)).toEqual(["OK", 2, undefined, 2]);
    expect(results[2]?.error).toMatch(/^WRONGTYPE/);
  });

  it("runs concurrent transactions on separate connections", async () => {
    const redis = dev.client(0);
    const keys = Array.from({ length: 8 }, (_, i) => uniqueKey(`ctx${i}`));
    const outcomes = await Promise.all(
      keys.map((key) => {
        const tx = redis.multi();
        tx.set(key, "a").append(key, "b").get(key);
        return tx.exec();
      }),
    );
    expect(outcomes).toEqual(keys.map(() => ["OK", 2, "ab"]));
  });

  it("discards a transaction with a queue-time error: 400, no partial write", async () => {
    const key = uniqueKey("abort");
    const redis = dev.client(0);
    const raw = await post("/multi-exec", [["set", key, "v"], ["get"], ["incr", key]]);
    expect(raw.status).toBe(400);
    expect(raw.json).toEqual({ error: "ERR wrong number of arguments for 'get' command" });
    expect(await dev.direct(0).exists(key)).toBe(0);
    const clientTx = redis.multi();
    clientTx.set(key, "v");
    clientTx.hset(key, {}); // HSET with no field: wrong arity, detected at queue time
    await expect(clientTx.exec()).rejects.toBeInstanceOf(errors.UpstashError);
    expect(await dev.direct(0).exists(key)).toBe(0);
    // The connection went back to the pool clean: the next transaction works.
    const next = redis.multi();
    next.set(key, "after");
    expect(await next.exec()).toEqual(["OK"]);
  });

  it("refuses transaction verbs and blocking commands with 400", async () => {
    for (const body of [[["multi"]], [["watch", "k"]], [["blpop", "k", 0]]]) {
      const { status, json } = await post("/multi-exec", body);
      expect(status).toBe(400);
      expect((json as { error: string }).error).toMatch(/not supported/);
    }
  });
});

describe("scripts", () => {
  it("goes EVALSHA → NOSCRIPT → EVAL, then EVALSHA hits", async () => {
    const control = dev.cluster.controls[1];
    const redis = dev.client(1);
    const script = redis.createScript<string>(`return "${uniqueKey("script")}" .. ARGV[1]`);
    control?.resetStats();
    expect(await script.exec([], ["!"])).toMatch(/!$/);
    expect(control?.stats().commands).toEqual({ evalsha: 1, eval: 1 });
    expect(await script.exec([], ["?"])).toMatch(/\?$/);
    expect(control?.stats().commands).toEqual({ evalsha: 2, eval: 1 });
  });
});

describe("HTTP surface", () => {
  it("rejects a wrong or missing token with 401 before any Redis work", async () => {
    const node = dev.cluster.nodes[0];
    const wrong = dev.client(0, { token: `${node?.token.slice(0, -1)}x` });
    await expect(wrong.set(uniqueKey("auth"), "v")).rejects.toThrow("Unauthorized");
    const missing = await fetch(`${node?.url}/pipeline`, { method: "POST", body: "[]" });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ error: "Unauthorized" });
    const admin = await fetch(`${node?.url}/__edgelock/stats`);
    expect(admin.status).toBe(401);
  });

  it("accepts the token as ?_token= and any content type", async () => {
    const node = dev.cluster.nodes[0];
    const res = await fetch(`${node?.url}/?_token=${node?.token}`, {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: '["echo","hi"]',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ result: "hi" });
  });

  it("answers an oversize body with 413 JSON, through the client too", async () => {
    const big = "x".repeat(70 * 1024);
    const raw = await post("/", ["set", "k", big]);
    expect(raw).toMatchObject({ status: 413, json: { error: "ERR max request size exceeded" } });
    const redis = dev.client(0, { retry: false });
    await expect(redis.set(uniqueKey("big"), big)).rejects.toThrow("ERR max request size exceeded");
  });

  it("gives 404, 405 and malformed bodies JSON errors", async () => {
    expect(await post("/nope", ["ping"])).toMatchObject({
      status: 404,
      json: { error: /not found/ },
    });
    const get = await post("/", undefined, { method: "GET", body: null });
    expect(get).toMatchObject({ status: 405, json: { error: /method not allowed/ } });
    expect(get.headers.get("allow")).toBe("POST, PUT, OPTIONS");
    expect(await post("/", "not json")).toMatchObject({ status: 400, json: { error: /JSON/ } });
    expect(await post("/", [])).toMatchObject({ status: 400, json: { error: /non-empty/ } });
    expect(await post("/", ["set", "k", null])).toMatchObject({ status: 400 });
    expect(await post("/pipeline", ["get", "k"])).toMatchObject({ status: 400 });
  });

  it("answers CORS preflights without a token", async () => {
    const res = await fetch(dev.cluster.nodes[0]?.url ?? "", {
      method: "OPTIONS",
      headers: { origin: "http://localhost:5173", "access-control-request-method": "POST" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-headers")).toMatch(/Upstash-Encoding/);
    expect(res.headers.get("access-control-expose-headers")).toBe("upstash-sync-token");
  });

  it("gives every node its own 128-bit token", () => {
    const [a, b] = dev.cluster.nodes;
    expect(a?.token).toMatch(/^[0-9a-f]{32}$/);
    expect(a?.token).not.toBe(b?.token);
  });
});
