/**
 * The dev endpoint gives the same REST answers on both backends for the commands edgelock, its CLI
 * and the README's samples use: each request goes to a node on redis-server and to an in-memory
 * node, and the two JSON answers must be equal (an unknown command's note aside).
 */
import { describe, expect, it } from "vitest";
import { ACQUIRE, INSPECT } from "../../src/scripts";
import { useDevCluster } from "../support/dev-cluster";

const redis = useDevCluster({ nodes: 1, backend: "redis" });
const memory = useDevCluster({ nodes: 1, backend: "memory" });

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** The in-memory node's note after Redis's unknown-command text. */
const NOTE = / ?\(not implemented by the in-memory dev node[^)]*\)/g;

async function send(
  fixture: typeof redis,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const { url, token } = fixture.cluster.nodes[0] ?? { url: "", token: "" };
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify(body),
  });
  const text = (await res.text()).replace(NOTE, " ");
  return { status: res.status, body: JSON.parse(text) as unknown };
}

/** Sends `body` to both nodes; both answers, redis-server's first. */
async function both(path: string, body: unknown, headers: Record<string, string> = {}) {
  return Promise.all([send(redis, path, body, headers), send(memory, path, body, headers)]);
}

/** Keys for one test, the same on both nodes. */
const keys = (name: string) => {
  const id = crypto.randomUUID().slice(0, 8);
  return { k: `${name}:${id}:k`, n: `${name}:${id}:n`, z: `${name}:${id}:z` };
};

describe("the same answers on redis-server and in memory", () => {
  it("single commands: strings, counters, sorted sets, expiry, wrong types, bad arguments", async () => {
    const { k, n, z } = keys("single");
    const commands: unknown[][] = [
      ["PING"],
      ["ping", "hi"],
      ["echo", "héllo ✓"],
      ["set", k, "v1"],
      ["get", k],
      ["set", k, "v2", "NX"],
      ["set", k, "v3", "XX", "GET"],
      ["set", `${k}:x`, "v", "XX"],
      ["get", k],
      ["exists", k, `${k}:x`],
      ["type", k],
      ["incr", n],
      ["incr", n],
      ["incr", k],
      ["zadd", z, "2", "b"],
      ["zadd", z, "1.5", "a"],
      ["zadd", z, "NX", "CH", "3", "c", "4", "d", "1", "a"],
      ["zadd", z, "XX", "GT", "CH", "9", "c", "0", "a", "5", "e"],
      ["zadd", z, "INCR", "0.1", "c"],
      ["zadd", z, "NX", "XX", "1", "a"],
      ["set", `${n}:7`, "007"],
      ["incr", `${n}:7`],
      ["set", `${n}:big`, "9007199254740993"],
      ["incr", `${n}:big`],
      ["get", `${n}:big`],
      ["zcard", z],
      ["zrange", z, "0", "-1", "WITHSCORES"],
      ["get", z],
      ["type", z],
      ["zrem", z, "a", "nope"],
      ["zpopmin", z],
      ["exists", z],
      ["pttl", k],
      ["ttl", `${k}:missing`],
      ["set", k, "v", "PX", "0"],
      ["set", k, "v", "BOGUS"],
      ["get"],
      ["get", k, "extra"],
      ["del", k, n, `${k}:missing`],
      ["get", k],
      ["time", "now"],
      ["nosuchcommand", "a", 1],
    ];
    const answers: Answer[] = [];
    for (const command of commands) {
      const [onRedis, inMemory] = await both("/", command);
      expect(inMemory, JSON.stringify(command)).toEqual(onRedis);
      answers.push(inMemory);
    }
    // What was compared: values, integers, errors with their 400.
    expect(answers.slice(3, 9).map((a) => a.body)).toEqual([
      { result: "OK" },
      { result: "v1" },
      { result: null },
      { result: "v1" },
      { result: null },
      { result: "v3" },
    ]);
    expect(answers.at(-1)).toEqual({
      status: 400,
      body: { error: "ERR unknown command 'nosuchcommand', with args beginning with: 'a' '1' " },
    });
  });

  it("TIME: whole seconds and microseconds as two texts on both (the values are each node's clock)", async () => {
    const [onRedis, inMemory] = await both("/", ["time"]);
    for (const answer of [onRedis, inMemory]) {
      expect(answer.status).toBe(200);
      const [seconds, micros] = (answer.body as { result: string[] }).result;
      expect(seconds).toMatch(/^[1-9]\d*$/);
      expect(micros).toMatch(/^(0|[1-9]\d{0,5})$/);
    }
  });

  it("hashes and ZSCORE: replies, order, wrong types, bad arguments, an emptied hash deleted", async () => {
    const { k, z } = keys("hash");
    const commands: unknown[][] = [
      ["hset", k, "b", "1", "a", "2", "b", "3"],
      ["hset", k, "c", ""],
      ["hgetall", k],
      ["hget", k, "a"],
      ["hget", k, "nope"],
      ["hlen", k],
      ["hexists", k, "c"],
      ["hexists", `${k}:missing`, "c"],
      ["type", k],
      ["get", k],
      ["hset", k, "x"],
      ["hset", k, "x", "1", "y"],
      ["hget", k],
      ["zadd", z, "0.1", "m", "inf", "n"],
      ["zscore", z, "m"],
      ["zscore", z, "n"],
      ["zscore", z, "nope"],
      ["zscore", k, "m"],
      ["hget", z, "m"],
      ["hdel", k, "a", "a", "nope"],
      ["hdel", k, "b", "c"],
      ["exists", k],
      ["hgetall", k],
    ];
    const answers: Answer[] = [];
    for (const command of commands) {
      const [onRedis, inMemory] = await both("/", command);
      expect(inMemory, JSON.stringify(command)).toEqual(onRedis);
      answers.push(inMemory);
    }
    expect(answers.slice(0, 3).map((a) => a.body)).toEqual([
      { result: 2 },
      { result: 1 },
      { result: ["b", "3", "a", "2", "c", ""] },
    ]);
    expect(answers.at(-2)?.body).toEqual({ result: 0 });
  });

  it("expiry: SET PX and PEXPIRE leave a TTL a few ms apart, and the key expires on both", async () => {
    const { k } = keys("ttl");
    await both("/", ["set", k, "v", "PX", "200"]);
    const [a, b] = await both("/", ["pttl", k]);
    expect(
      Math.abs((a.body as { result: number }).result - (b.body as { result: number }).result),
    ).toBeLessThan(100);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const [gone, goneToo] = await both("/", ["get", k]);
    expect([gone.body, goneToo.body]).toEqual([{ result: null }, { result: null }]);
  });

  it("PEXPIRE and EXPIRE with NX/XX/GT/LT, and a user's scripts (sha1hex too), answer alike", async () => {
    const { k, n } = keys("flags");
    const commands: unknown[][] = [
      ["set", k, "v", "PX", "9000"],
      ["pexpire", k, 20000, "GT"],
      ["pexpire", k, 5000, "GT"],
      ["pexpire", k, 3000, "NX"],
      ["pexpire", k, 1000, "lt"],
      ["expire", k, 60, "XX"],
      ["pexpire", k, 10, "GT", "LT"],
      ["pexpire", k, 10, "SOON"],
      ["zadd", n, "", "m"],
      ["eval", "return 'job-' .. redis.call('INCR', KEYS[1]) .. string.format(' %d', 3.7)", 1, n],
      ["eval", "x = 1", 0],
      ["eval", "return redis.sha1hex('abc')", 0],
    ];
    const answers: Answer[] = [];
    for (const command of commands) {
      const [onRedis, inMemory] = await both("/", command);
      expect(inMemory, JSON.stringify(command)).toEqual(onRedis);
      answers.push(inMemory);
    }
    expect(answers.slice(1, 6).map((a) => a.body)).toEqual(
      [1, 0, 0, 1, 1].map((result) => ({ result })),
    );
    expect(answers[9]?.body).toEqual({ result: "job-1 3" });
  });

  it("scripts: EVAL, EVALSHA, NOSCRIPT, numkeys errors, edgelock's acquire and inspect", async () => {
    const { k, n } = keys("script");
    const token = "0123456789abcdef0123456789abcdef";
    const commands: unknown[][] = [
      ["evalsha", ACQUIRE.sha1, 3, k, n, `${k}:wait`, token, 5000, 0],
      ["eval", ACQUIRE.lua, 3, k, n, `${k}:wait`, token, 5000, 0],
      ["evalsha", ACQUIRE.sha1.toUpperCase(), 3, k, n, `${k}:wait`, token, 5000, 0],
      ["eval", "return {1, 'x', {'OK', {2}}, false, 'after'}", 0],
      ["eval", "return redis.call('GET', KEYS[1])", 1, k],
      ["eval", "return 1", 2, "a"],
      ["eval", "return 1", -1],
      ["script", "exists", ACQUIRE.sha1, "0".repeat(40)],
    ];
    const answers: Answer[] = [];
    for (const command of commands) {
      const [onRedis, inMemory] = await both("/", command);
      expect(inMemory, JSON.stringify(command).slice(0, 80)).toEqual(onRedis);
      answers.push(inMemory);
    }
    expect(answers.slice(0, 4).map((a) => a.body)).toEqual([
      { error: "NOSCRIPT No matching script. Please use EVAL." },
      { result: [1, 0, -1] },
      { result: [1, 0, -1] }, // the same token again: still ours
      { result: [1, "x", ["OK", [2]], null, "after"] },
    ]);
    // INSPECT's reply carries the key's PTTL: equal but for the milliseconds between the two calls.
    const [a, b] = await both("/", ["eval", INSPECT.lua, 2, k, n]);
    const shape = (answer: Answer) => JSON.stringify(answer).replace(/\b4\d{3}\b/g, "<pttl>");
    expect(shape(b)).toBe(shape(a));
  });

  it("pipelines and transactions: per-command answers, inline errors, a queue error aborts all", async () => {
    const { k } = keys("multi");
    const pipeline = [
      ["set", k, "1"],
      ["incr", k],
      ["get", k],
      ["nosuch"],
      ["get"],
      ["incr", "x y"],
    ];
    const [p1, p2] = await both("/pipeline", pipeline);
    expect(p2).toEqual(p1);
    const good = [
      ["set", k, "1"],
      ["incr", k],
      ["set", `${k}:s`, "x"],
      ["incr", `${k}:s`],
    ];
    const [m1, m2] = await both("/multi-exec", good);
    expect(m2).toEqual(m1);
    const [a1, a2] = await both("/multi-exec", [
      ["set", k, "9"],
      ["nosuch", "a"],
    ]);
    expect(a2).toEqual(a1);
    expect(a1.status).toBe(400);
    const [g1, g2] = await both("/", ["get", k]);
    expect(g2).toEqual(g1);
    expect(g1.body).toEqual({ result: "2" }); // the aborted transaction wrote nothing
  });

  it("base64 encoding of strings at every depth, never of errors", async () => {
    const { k } = keys("b64");
    const headers = { "upstash-encoding": "base64" };
    await both("/", ["set", k, "✓ bytes"]);
    for (const command of [["get", k], ["eval", "return {'a', {1, 'b'}}", 0], ["nosuch"]]) {
      const [onRedis, inMemory] = await both("/", command, headers);
      expect(inMemory).toEqual(onRedis);
    }
  });
});
