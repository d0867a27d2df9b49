/**
 * The Hono `idempotency()` middleware at its edges, against a real 3-node dev cluster: a stream
 * whose callback throws part-way is never replayed as a success; an encoded body (`compress()`
 * inside) replays readable; the request body stays readable for every reader; an outer `lock()`
 * keeps `c.var.lock`; the host is part of the default scope; an inner `lock()`'s own busy answer
 * is never kept; a released claim is gone from every node before the answer goes out (Node, no
 * execution context).
 */
import { Hono } from "hono";
import { compress } from "hono/compress";
import { stream, streamSSE, streamText } from "hono/streaming";
import { afterEach, describe, expect, it } from "vitest";
import { idempotency, lock } from "../../src/adapters/hono";
import { createLocks, type Lock } from "../../src/index";
import { resetCluster, sleep, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });
afterEach(() => resetCluster(dev.cluster));

const locksFor = (prefix: string, extra: { fencing?: boolean; requestTimeout?: number } = {}) =>
  createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 300, ...extra });

const post = (app: Hono, path: string, key: string, init: RequestInit = {}) =>
  app.request(path, {
    method: "POST",
    body: "x",
    ...init,
    headers: { "Idempotency-Key": key, ...(init.headers as Record<string, string>) },
  });

const title = async (res: Response) => ((await res.json()) as { title: string }).title;

describe("idempotency(): a streaming helper whose callback throws part-way", () => {
  it.each([
    [
      "stream()",
      (c: Parameters<typeof stream>[0]) =>
        stream(c, async (s) => {
          await s.write("part1;");
          await sleep(20);
          throw new Error("boom");
        }),
    ],
    [
      "streamSSE()",
      (c: Parameters<typeof stream>[0]) =>
        streamSSE(
          c,
          async (s) => {
            await s.writeSSE({ data: "1" });
            await sleep(20);
            throw new Error("boom");
          },
          async () => undefined,
        ),
    ],
  ])(
    "%s: the truncated body is not replayed; the retry gets 409, never a second run",
    async (_, handler) => {
      const app = new Hono();
      let runs = 0;
      app.post("/s", idempotency({ locks: locksFor(uniquePrefix("idem-stream-throw")) }), (c) => {
        runs += 1;
        return handler(c);
      });
      const first = await post(app, "/s", "k");
      expect(first.status).toBe(200);
      await first.text();
      const retry = await post(app, "/s", "k");
      expect(retry.status).toBe(409);
      expect(retry.headers.get("idempotency-replayed")).toBeNull();
      expect(await title(retry)).toBe("Request already processed");
      expect(runs).toBe(1);
    },
  );
});

describe("idempotency(): a streaming helper whose callback throws at once", () => {
  it("streamText(): a body that ended before the handler's answer was read is not replayed either", async () => {
    const app = new Hono();
    let runs = 0;
    app.post("/t", idempotency({ locks: locksFor(uniquePrefix("idem-stream-fast")) }), (c) => {
      runs += 1;
      return streamText(c, async (s) => {
        await s.write("part1;");
        throw new Error("boom");
      });
    });
    expect(await (await post(app, "/t", "k")).text()).toBe("part1;");
    const retry = await post(app, "/t", "k");
    expect(retry.status).toBe(409);
    expect(await title(retry)).toBe("Request already processed");
    expect(runs).toBe(1);
  });
});

describe("idempotency(): compress() inside", () => {
  it("a gzip body is kept decoded: the replay is readable without Accept-Encoding", async () => {
    const app = new Hono();
    let runs = 0;
    const text = "invoice line\n".repeat(200);
    // compress()'s body is a stream that may end after the handler returned: kept for replay
    // only with replayStreams (otherwise "completed without replay", a retry gets 409).
    app.use("/c", idempotency({ locks: locksFor(uniquePrefix("idem-gzip")), replayStreams: true }));
    app.use("/c", compress());
    app.post("/c", (c) => {
      runs += 1;
      return c.text(text, 201);
    });
    const first = await post(app, "/c", "k", { headers: { "Accept-Encoding": "gzip" } });
    expect(first.headers.get("content-encoding")).toBe("gzip");
    await first.arrayBuffer();
    const replay = await post(app, "/c", "k");
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect(replay.headers.get("content-encoding")).toBeNull();
    expect(replay.headers.get("content-type")).toContain("text/plain");
    expect(await replay.text()).toBe(text);
    expect(runs).toBe(1);
  });
});

describe("idempotency(): the request body stays readable", () => {
  it.each([
    ["c.req.raw.text()", (c: { req: { raw: Request } }) => c.req.raw.text()],
    [
      "c.req.json()",
      async (c: { req: { json(): Promise<unknown> } }) => JSON.stringify(await c.req.json()),
    ],
    [
      "c.req.parseBody()",
      async (c: { req: { parseBody(): Promise<Record<string, unknown>> } }) =>
        JSON.stringify(await c.req.parseBody()),
    ],
  ])("%s after the fingerprint read it", async (_, read) => {
    const app = new Hono();
    app.post("/r", idempotency({ locks: locksFor(uniquePrefix("idem-body")) }), async (c) =>
      c.text(await read(c as never), 201),
    );
    const json = read.toString().includes("parseBody")
      ? { body: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } }
      : { body: '{"a":"1"}', headers: { "content-type": "application/json" } };
    const res = await post(app, "/r", "k", json);
    expect(res.status).toBe(201);
    expect(await res.text()).toMatch(/"?a"?[:=]"?1/);
  });
});

describe("idempotency(): inside an outer lock()", () => {
  it("c.var.lock stays the outer lock (its key and fence); the claim is c.var.idempotencyClaim", async () => {
    const locks = locksFor(uniquePrefix("idem-varclash"), { fencing: true });
    const app = new Hono();
    const seen: { lock?: Lock; claim?: Lock | undefined } = {};
    app.post(
      "/v",
      lock({ locks, key: () => "invoice:7", fencing: true }),
      idempotency({ locks }),
      (c) => {
        seen.lock = c.var.lock;
        seen.claim = c.var.idempotencyClaim;
        return c.text("ok", 201);
      },
    );
    // The outer lock's fence counter is ahead of the claim's.
    for (let i = 0; i < 3; i++) await (await locks.acquire("invoice:7")).release();
    expect((await post(app, "/v", "k")).status).toBe(201);
    expect(seen.lock?.key).toBe("invoice:7");
    expect(seen.lock?.fence).toBe(4);
    expect(seen.claim).toBeDefined();
    expect(seen.claim?.key).not.toBe("invoice:7");
    expect(seen.claim?.key).toMatch(/^idempotency:/);
  });
});

describe("idempotency(): the host is part of the default scope", () => {
  it("the same key, path and body on another host runs there; on the same host it replays", async () => {
    const app = new Hono();
    const runs: string[] = [];
    app.post("/echo", idempotency({ locks: locksFor(uniquePrefix("idem-host")) }), (c) => {
      runs.push(new URL(c.req.url).host);
      return c.json({ host: new URL(c.req.url).host }, 201);
    });
    const send = (host: string) =>
      app.request(`http://${host}/echo`, {
        method: "POST",
        body: "x",
        headers: { "Idempotency-Key": "same" },
      });
    expect(await (await send("a.example.com")).json()).toEqual({ host: "a.example.com" });
    const b = await send("b.example.com");
    expect(b.headers.get("idempotency-replayed")).toBeNull();
    expect(await b.json()).toEqual({ host: "b.example.com" });
    const again = await send("a.example.com");
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(runs).toEqual(["a.example.com", "b.example.com"]);
  });
});

describe("idempotency(): an inner lock()'s own onBusy answer", () => {
  it("a custom 423 is not kept: the retry after the lock is free runs", async () => {
    const locks = locksFor(uniquePrefix("idem-423"));
    const app = new Hono();
    let runs = 0;
    app.post(
      "/m",
      idempotency({ locks }),
      lock({ locks, key: () => "shared", onBusy: (c) => c.json({ error: "locked" }, 423) }),
      (c) => {
        runs += 1;
        return c.text("done", 201);
      },
    );
    const other = await locks.acquire("shared");
    const busy = await post(app, "/m", "k");
    expect(busy.status).toBe(423);
    await other.release();
    const retry = await post(app, "/m", "k");
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotency-replayed")).toBeNull();
    expect(runs).toBe(1);
  });
});

describe("idempotency(): a released claim on Node (no execution context)", () => {
  it("after a 500, the claim is gone from every node before the answer goes out", async () => {
    const prefix = uniquePrefix("idem-settled");
    const locks = locksFor(prefix, { requestTimeout: 2_000 });
    const app = new Hono();
    let claimKey = "";
    app.post("/f", idempotency({ locks }), async (c) => {
      [claimKey = ""] = (await dev.direct(0).keys(`${prefix}idempotency:*`)).filter(
        (key) => !key.endsWith(":wait"),
      );
      // The next request on node 2, the release, answers 200 ms late.
      dev.cluster.controls[2]?.inject({ kind: "latency", ms: 200, count: 1 });
      return c.text("failed", 500);
    });
    const res = await post(app, "/f", "k");
    expect(res.status).toBe(500);
    expect(claimKey).not.toBe("");
    const present = await Promise.all([0, 1, 2].map((i) => dev.direct(i).exists(claimKey)));
    expect(present).toEqual([0, 0, 0]);
  });
});

describe("idempotency(): a body an earlier middleware read", () => {
  it("is fingerprinted from hono's cache: a retry replays, another body is 422", async () => {
    const app = new Hono();
    let runs = 0;
    app.post(
      "/j",
      async (c, next) => {
        await c.req.json();
        await next();
      },
      idempotency({ locks: locksFor(uniquePrefix("idem-read-before")) }),
      async (c) => {
        runs += 1;
        return c.json(await c.req.json(), 201);
      },
    );
    const send = (body: string) =>
      post(app, "/j", "k", { body, headers: { "content-type": "application/json" } });
    expect((await send('{"a":1}')).status).toBe(201);
    const retry = await send('{"a":1}');
    expect(retry.headers.get("idempotency-replayed")).toBe("true");
    expect((await send('{"a":2}')).status).toBe(422);
    expect(runs).toBe(1);
  });
});
