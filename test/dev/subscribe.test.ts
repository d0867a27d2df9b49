// The SSE pub/sub routes of the dev endpoint (src/dev/subscribe.ts), observed through the
// unmodified @upstash/redis client and raw fetch, with redis-server's own view (PUBSUB NUMSUB,
// CLIENT LIST) read back through the endpoint to prove each stream holds exactly one connection.
import { errors } from "@upstash/redis";
import { afterEach, describe, expect, it } from "vitest";
import { type DevNodeConfig, startDevCluster } from "../../src/dev/index";
import { SUBSCRIBER_CONNECTION_NAME } from "../../src/dev/redis-backend";
import { uniqueKey, useDevCluster } from "../support/dev-cluster";
import { redisServerPid, waitForExit } from "../support/processes";

const dev = useDevCluster({ nodes: 2 });

const node = (i: number): DevNodeConfig => {
  const config = dev.cluster.nodes[i];
  if (config === undefined) throw new Error(`no node ${i}`);
  return config;
};
const control = (i: number) => {
  const c = dev.cluster.controls[i];
  if (c === undefined) throw new Error(`no node ${i}`);
  return c;
};

/** Closes what a test opened even when it fails half-way, so one failure does not cascade. */
const opened: Array<() => unknown> = [];
function track<T extends { unsubscribe(): Promise<void> }>(sub: T): T {
  opened.push(() => sub.unsubscribe());
  return sub;
}

/** One JSON command on `/`, as the endpoint answers it. */
async function run(i: number, command: unknown[]): Promise<unknown> {
  const { url, token } = node(i);
  const res = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify(command),
  });
  return ((await res.json()) as { result: unknown }).result;
}

/** Subscriber connections open on node i's redis-server. */
async function subscriberConnections(i: number): Promise<number> {
  const list = (await run(i, ["CLIENT", "LIST"])) as string;
  return list.split("\n").filter((line) => line.includes(`name=${SUBSCRIBER_CONNECTION_NAME} `))
    .length;
}

async function numsub(i: number, channel: string): Promise<number> {
  const [, count] = (await run(i, ["PUBSUB", "NUMSUB", channel])) as [string, number];
  return count;
}

interface RawStream {
  readonly status: number;
  readonly headers: Headers;
  /** The `data:` payloads received so far (SSE streams), or the JSON body (other replies). */
  readonly events: string[];
  readonly json: unknown;
  /** Settles when the server ends the stream (or the reader is aborted). */
  readonly ended: Promise<void>;
  abort(): void;
}

/** Opens an SSE request the way @upstash/redis does, and collects its events. */
async function openStream(
  path: string,
  target: DevNodeConfig,
  init: { token?: string } = {},
): Promise<RawStream> {
  const controller = new AbortController();
  const res = await fetch(`${target.url}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${init.token ?? target.token}`,
      accept: "text/event-stream",
      "cache-control": "no-cache",
    },
    body: "[]",
    signal: controller.signal,
  });
  const events: string[] = [];
  const abort = () => controller.abort();
  opened.push(abort);
  if (res.headers.get("content-type") !== "text/event-stream") {
    const json = (await res.json()) as unknown;
    return {
      status: res.status,
      headers: res.headers,
      events,
      json,
      ended: Promise.resolve(),
      abort,
    };
  }
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const line = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          events.push(line.startsWith("data: ") ? line.slice(6) : `?${line}`);
        }
      }
    } catch {
      // aborted, or the connection was reset: the stream is over either way
    }
  })();
  return { status: res.status, headers: res.headers, events, json: undefined, ended, abort };
}

afterEach(async () => {
  for (const close of opened.splice(0)) await close();
  for (const i of [0, 1]) {
    control(i).clearFaults();
    // Every test closes what it opened: no subscriber connection outlives its stream.
    await expect.poll(() => subscriberConnections(i), { timeout: 5_000 }).toBe(0);
  }
});

describe("subscribe through @upstash/redis", () => {
  it("gets the subscribe count, then messages from PUBLISH and from a Lua script, in order", async () => {
    const redis = dev.client(0);
    const channel = uniqueKey("ch");
    const events: unknown[] = [];
    const sub = track(redis.subscribe<unknown>(channel));
    sub.on("subscribe", (count) => events.push(["subscribe", count]));
    sub.on("message", ({ channel: ch, message }) => events.push(["message", ch, message]));
    await expect.poll(() => events.length).toBe(1);
    expect(await redis.publish(channel, "hello")).toBe(1);
    const script = "return redis.call('PUBLISH', KEYS[1], ARGV[1])";
    expect(await redis.eval(script, [channel], [JSON.stringify({ n: 1 })])).toBe(1);
    expect(await redis.publish(channel, "last")).toBe(1);
    await expect.poll(() => events.length).toBe(4);
    expect(events).toEqual([
      ["subscribe", 1],
      ["message", channel, "hello"],
      ["message", channel, { n: 1 }],
      ["message", channel, "last"],
    ]);
    await sub.unsubscribe();
  });

  it("psubscribe gets the psubscribe count, then pmessage with pattern and channel", async () => {
    const redis = dev.client(0);
    const prefix = uniqueKey("pat");
    const events: unknown[] = [];
    const sub = track(redis.psubscribe<unknown>(`${prefix}:*`));
    sub.on("psubscribe", (count) => events.push(["psubscribe", count]));
    sub.on("pmessage", (e) => events.push(["pmessage", e.pattern, e.channel, e.message]));
    await expect.poll(() => events.length).toBe(1);
    // The client JSON-parses pmessage payloads without a fallback: publish JSON texts only.
    expect(await redis.publish(`${prefix}:a`, { x: 1 })).toBe(1);
    expect(await redis.publish(`other:${prefix}`, 0)).toBe(0);
    expect(await redis.publish(`${prefix}:b`, [1, 2])).toBe(1);
    await expect.poll(() => events.length).toBe(3);
    expect(events).toEqual([
      ["psubscribe", 1],
      ["pmessage", `${prefix}:*`, `${prefix}:a`, { x: 1 }],
      ["pmessage", `${prefix}:*`, `${prefix}:b`, [1, 2]],
    ]);
    await sub.unsubscribe();
  });

  it("delivers every message to two subscribers of one channel", async () => {
    const channel = uniqueKey("fanout");
    const received: string[][] = [[], []];
    const subs = [0, 1].map((i) => {
      const sub = track(dev.client(0).subscribe<string>(channel));
      sub.on("message", ({ message }) => received[i]?.push(message));
      return sub;
    });
    await expect.poll(() => numsub(0, channel)).toBe(2);
    for (const message of ["m1", "m2", "m3"]) {
      expect(await dev.client(0).publish(channel, message)).toBe(2);
    }
    await expect.poll(() => received.map((r) => r.length)).toEqual([3, 3]);
    expect(received).toEqual([
      ["m1", "m2", "m3"],
      ["m1", "m2", "m3"],
    ]);
    await Promise.all(subs.map((sub) => sub.unsubscribe()));
  });

  it("unsubscribing closes the stream's redis-server connection", async () => {
    const redis = dev.client(0);
    const channel = uniqueKey("bye");
    let subscribed = 0;
    const sub = track(redis.subscribe(channel));
    sub.on("subscribe", () => subscribed++);
    await expect.poll(() => subscribed).toBe(1);
    expect(await numsub(0, channel)).toBe(1);
    expect(await subscriberConnections(0)).toBe(1);
    await sub.unsubscribe();
    await expect.poll(() => numsub(0, channel)).toBe(0);
    await expect.poll(() => subscriberConnections(0)).toBe(0);
    expect(await redis.publish(channel, "nobody")).toBe(0);
  });

  it("percent-decodes the channel, slashes and non-ASCII included", async () => {
    const channel = `news eu/✓ ${uniqueKey("enc")}`;
    const messages: string[] = [];
    const sub = track(dev.client(0).subscribe<string>(channel));
    sub.on("message", ({ channel: ch, message }) => messages.push(`${ch}|${message}`));
    await expect.poll(() => numsub(0, channel)).toBe(1);
    expect(await dev.client(0).publish(channel, "hi")).toBe(1);
    await expect.poll(() => messages).toEqual([`${channel}|hi`]);
    await sub.unsubscribe();
  });

  it("rejects a wrong token with 401 before subscribing", async () => {
    const channel = uniqueKey("auth");
    const wrong = dev.client(0, { token: `${node(0).token.slice(0, -1)}x` });
    const failures: Error[] = [];
    const sub = track(wrong.subscribe(channel));
    sub.on("error", (error) => failures.push(error));
    await expect.poll(() => failures.length).toBe(1);
    expect(failures[0]).toBeInstanceOf(errors.UpstashError);
    expect(failures[0]?.message).toMatch(/^Unauthorized/);
    const raw = await openStream(`/subscribe/${channel}`, node(0), { token: "nope" });
    expect(raw.status).toBe(401);
    expect(raw.json).toEqual({ error: "Unauthorized" });
    expect(await numsub(0, channel)).toBe(0);
    expect(await subscriberConnections(0)).toBe(0);
    await sub.unsubscribe();
  });
});

describe("the SSE wire format and the other pub/sub routes", () => {
  it("streams data lines with SSE headers and counts as one request", async () => {
    const channel = uniqueKey("raw");
    control(0).resetStats();
    const stream = await openStream(`/subscribe/${channel}`, node(0));
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    expect(stream.headers.get("cache-control")).toBe("no-cache");
    expect(stream.headers.get("upstash-sync-token")).toMatch(/^\d+$/);
    await expect.poll(() => stream.events).toEqual([`subscribe,${channel},1`]);
    expect(control(0).stats()).toEqual({ requests: 1, commands: { subscribe: 1 } });
    // Base64 is never applied to stream payloads, whatever the request asked for.
    await run(0, ["PUBLISH", channel, '{"a":"b,c"}']);
    await expect
      .poll(() => stream.events)
      .toEqual([`subscribe,${channel},1`, `message,${channel},{"a":"b,c"}`]);
    stream.abort();
    await stream.ended;
  });

  it("publishes path-style (/publish/<ch>/<msg>, or the body) and as PUBLISH on /", async () => {
    const channel = uniqueKey("pub");
    const stream = await openStream(`/subscribe/${encodeURIComponent(channel)}`, node(0));
    await expect.poll(() => stream.events.length).toBe(1);
    control(0).resetStats();
    const { url, token } = node(0);
    const headers = { authorization: `Bearer ${token}` };
    const path = `${url}/publish/${encodeURIComponent(channel)}`;
    const byPath = await fetch(`${path}/${encodeURIComponent("a/b c")}`, {
      method: "POST",
      headers,
    });
    expect(byPath.status).toBe(200);
    expect(await byPath.json()).toEqual({ result: 1 });
    const byBody = await fetch(path, { method: "POST", headers, body: "from the body" });
    expect(await byBody.json()).toEqual({ result: 1 });
    const byGet = await fetch(`${path}/got?_token=${token}`);
    expect(await byGet.json()).toEqual({ result: 1 });
    expect(await run(0, ["PUBLISH", channel, "json"])).toBe(1);
    const noMessage = await fetch(path, { method: "POST", headers });
    expect(noMessage.status).toBe(400);
    expect(await noMessage.json()).toEqual({
      error: "ERR wrong number of arguments for 'publish' command",
    });
    await expect
      .poll(() => stream.events.slice(1))
      .toEqual([
        `message,${channel},a/b c`,
        `message,${channel},from the body`,
        `message,${channel},got`,
        `message,${channel},json`,
      ]);
    expect(control(0).stats()).toEqual({ requests: 5, commands: { publish: 4 } });
    stream.abort();
  });

  it("answers bad paths and methods with JSON errors", async () => {
    const malformed = await openStream("/subscribe/%E2%9C", node(0));
    expect(malformed).toMatchObject({ status: 400, json: { error: /percent-encoding/ } });
    const empty = await openStream("/psubscribe/", node(0));
    expect(empty).toMatchObject({ status: 400, json: { error: /missing pattern/ } });
    const del = await fetch(`${node(0).url}/subscribe/x`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${node(0).token}` },
    });
    expect(del.status).toBe(405);
    expect(del.headers.get("allow")).toBe("GET, POST, PUT, OPTIONS");
  });
});

describe("faults and process controls on SSE requests", () => {
  it("applies status, reset and hang faults before subscribing", async () => {
    const channel = uniqueKey("faulty");
    control(0).inject({ kind: "status", status: 503, command: "subscribe", count: 1 });
    const refused = await openStream(`/subscribe/${channel}`, node(0));
    expect(refused).toMatchObject({ status: 503, json: { error: "ERR injected fault" } });
    for (const kind of ["reset-before", "reset-after"] as const) {
      control(0).inject({ kind, command: "subscribe", count: 1 });
      const outcome = await openStream(`/subscribe/${channel}`, node(0)).catch((e: unknown) => e);
      expect(outcome).toBeInstanceOf(TypeError); // fetch failed: the connection was reset
    }
    control(0).resetStats();
    control(0).inject({ kind: "hang", command: "subscribe", count: 1 });
    const controller = new AbortController();
    const hung = fetch(`${node(0).url}/subscribe/${channel}`, {
      method: "POST",
      headers: { authorization: `Bearer ${node(0).token}` },
      body: "[]",
      signal: controller.signal,
    }).catch((e: unknown) => e);
    await expect.poll(() => control(0).stats().requests).toBe(1);
    controller.abort();
    expect(await hung).toMatchObject({ name: "AbortError" });
    expect(await numsub(0, channel)).toBe(0);
  });

  it("subscribes after a latency fault", async () => {
    const channel = uniqueKey("slow");
    control(0).inject({ kind: "latency", ms: 100, command: "subscribe", count: 1 });
    const stream = await openStream(`/subscribe/${channel}`, node(0));
    await expect.poll(() => stream.events).toEqual([`subscribe,${channel},1`]);
    const faults = await fetch(`${node(0).url}/__edgelock/faults`, {
      headers: { authorization: `Bearer ${node(0).token}` },
    });
    expect(await faults.json()).toEqual({ result: [] }); // the subscription took the fault
    stream.abort();
  });

  it("ends open streams when redis-server is killed, answers 503 until the restart", async () => {
    const channel = uniqueKey("killed");
    const stream = await openStream(`/subscribe/${channel}`, node(1));
    await expect.poll(() => stream.events.length).toBe(1);
    await control(1).kill();
    await stream.ended; // ended by the server, not aborted by the test
    const down = await openStream(`/subscribe/${channel}`, node(1));
    expect(down).toMatchObject({ status: 503, json: { error: /node 1 .*unavailable/ } });
    await control(1).restart();
    const again = await openStream(`/subscribe/${channel}`, node(1));
    await expect.poll(() => again.events).toEqual([`subscribe,${channel},1`]);
    again.abort();
  });
});

describe("a paused redis-server", () => {
  it("stalls the stream; a client that gives up meanwhile leaves no connection behind", async () => {
    const channel = uniqueKey("paused");
    const { url, token } = node(1);
    control(1).resetStats();
    control(1).pause();
    const controller = new AbortController();
    try {
      const pending = fetch(`${url}/subscribe/${channel}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
        body: "[]",
        signal: controller.signal,
      }).catch((e: unknown) => e);
      await expect.poll(() => control(1).stats().requests).toBe(1);
      controller.abort();
      expect(await pending).toMatchObject({ name: "AbortError" });
    } finally {
      control(1).resume();
    }
    await expect.poll(() => subscriberConnections(1)).toBe(0);
    expect(await numsub(1, channel)).toBe(0);
  });
});

describe("stop", () => {
  it("finishes while streams are open, even one stalled on a paused redis-server", async () => {
    const cluster = await startDevCluster({ nodes: 1, backend: "redis" });
    try {
      const [target] = cluster.nodes;
      const [nodeControl] = cluster.controls;
      if (target === undefined || nodeControl === undefined) throw new Error("no node 0");
      const pid = await redisServerPid(nodeControl.redisUrl);
      const channel = uniqueKey("stop");
      const live = await openStream(`/subscribe/${channel}`, target);
      await expect.poll(() => live.events).toEqual([`subscribe,${channel},1`]);
      nodeControl.pause();
      const stalled = openStream(`/subscribe/${channel}`, target).catch((e: unknown) => e);
      await expect.poll(() => nodeControl.stats().requests).toBe(2); // it reached the endpoint
      await cluster.stop();
      await live.ended;
      const outcome = await stalled;
      // Either the request got its 503 out before the socket closed, or the socket closed first.
      if (!(outcome instanceof TypeError)) expect(outcome).toMatchObject({ status: 503 });
      await waitForExit([pid]);
    } finally {
      await cluster.stop(); // idempotent: only does something when the test failed early
    }
  });
});
