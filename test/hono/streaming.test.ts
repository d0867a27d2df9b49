/**
 * The Hono `lock()` middleware holds its lock for the whole response, body included: streamed
 * bodies (`hono/streaming`'s `stream()`, `streamText()`, `streamSSE()`, a handler's own
 * `ReadableStream`) keep the key until they end or the client cancels them; buffered bodies and
 * bodyless responses release right after the handler, as before. Against a real 3-node dev cluster,
 * in Node through `app.request()`, with a fake Workers execution context, and through
 * `hono/aws-lambda`. The stream callbacks wait on gates the test opens, so no step depends on timing.
 */
import { Hono } from "hono";
import { handle } from "hono/aws-lambda";
import { stream, streamSSE, streamText } from "hono/streaming";
import { describe, expect, it } from "vitest";
import { budget, createLocks, type Lock } from "../../src";
import { lock } from "../../src/adapters/hono";
import { fakeContext, gate, httpEventV2 } from "../lambda/helpers";
import { readBack, requests, resetCluster } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });
const N = 3;

function setup() {
  resetCluster(dev.cluster);
  const prefix = `t:stream:${crypto.randomUUID()}:`;
  const locks = createLocks({ nodes: dev.cluster.nodes, prefix, lease: 5_000 });
  /** The key's value on every node, read from redis-server directly. */
  const values = (key: string) => readBack(dev, N, `${prefix}${key}`);
  /** Once the key is gone from every node (a Workers release runs in waitUntil), or after 3 s. */
  const goneEverywhere = async (key: string) => {
    const until = performance.now() + 3_000;
    for (;;) {
      const now = await values(key);
      if (now.every((v) => v === null) || performance.now() > until) return now;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { locks, values, goneEverywhere };
}

const CHUNKS = 3;
type Kind = "stream" | "streamText" | "streamSSE" | "ReadableStream";

/**
 * An app whose `POST /s` streams `CHUNKS` chunks under `lock()`, each written once its gate opens.
 * Records what the handler saw: the lock, the signal's state before each write, producer aborts.
 */
function streamingApp(locks: ReturnType<typeof createLocks>, kind: Kind) {
  const gates = Array.from({ length: CHUNKS }, () => gate());
  const seen = { lock: undefined as Lock | undefined, abortedDuring: [] as boolean[], aborts: 0 };
  const app = new Hono();
  app.on(["POST", "GET"], "/s", lock({ locks, key: () => "s" }), (c) => {
    const held = c.var.lock;
    seen.lock = held;
    const before = async (i: number) => {
      await gates[i]?.promise;
      seen.abortedDuring.push(held.signal.aborted);
    };
    const onAbort = () => {
      seen.aborts++;
    };
    if (kind === "streamSSE") {
      return streamSSE(c, async (s) => {
        s.onAbort(onAbort);
        for (let i = 0; i < CHUNKS; i++) {
          await before(i);
          await s.writeSSE({ data: `chunk${i}` });
        }
      });
    }
    if (kind === "ReadableStream") {
      let i = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (i === CHUNKS) return controller.close();
          await before(i);
          controller.enqueue(new TextEncoder().encode(`chunk${i++};`));
        },
        cancel: onAbort,
      });
      return new Response(body, { headers: { "content-type": "text/plain" } });
    }
    const helper = kind === "stream" ? stream : streamText;
    return helper(c, async (s) => {
      s.onAbort(onAbort);
      for (let i = 0; i < CHUNKS; i++) {
        await before(i);
        await s.write(`chunk${i};`);
      }
    });
  });
  return { app, gates, seen };
}

const post = (app: Hono, path: string, ctx?: unknown) =>
  app.request(path, { method: "POST" }, undefined, ctx as never);

describe.each<Kind>(["stream", "streamText", "streamSSE", "ReadableStream"])(
  "lock() with a %s body",
  (kind) => {
    it("holds the key until the body ended: a second caller gets 409, every chunk arrives, then the key is gone", async () => {
      const { locks, values } = setup();
      const { app, gates, seen } = streamingApp(locks, kind);
      const first = await post(app, "/s");
      expect(first.status).toBe(200);
      const token = seen.lock?.token;
      // The handler has returned its Response; the body is still to be written.
      expect(await values("s")).toEqual([token, token, token]);
      const second = await post(app, "/s");
      expect(second.status).toBe(409);

      const reader = (first.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = "";
      for (const [i, g] of gates.entries()) {
        g.open();
        const { value } = await reader.read();
        text += decoder.decode(value);
        if (i === CHUNKS - 1) break; // the producer may close now, and the release begin
        expect(await values("s")).toEqual([token, token, token]);
        expect(seen.lock?.signal.aborted).toBe(false);
      }
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
      for (let i = 0; i < CHUNKS; i++) expect(text).toContain(`chunk${i}`);
      expect(seen.abortedDuring).toEqual([false, false, false]);
      // In Node the body's end reaches the client only once every node answered the release.
      expect(await values("s")).toEqual([null, null, null]);
      expect(seen.lock?.signal.reason).toMatchObject({ name: "LockEndedError", how: "released" });
      expect(seen.aborts).toBe(0);
    });

    it("a client that cancels the body releases the key and stops the producer", async () => {
      const { locks, values } = setup();
      const { app, gates, seen } = streamingApp(locks, kind);
      const res = await post(app, "/s");
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      gates[0]?.open();
      await reader.read();
      const token = seen.lock?.token;
      expect(await values("s")).toEqual([token, token, token]);
      await reader.cancel("client went away");
      expect(await values("s")).toEqual([null, null, null]);
      expect(seen.aborts).toBe(1);
      expect(seen.lock?.signal.reason).toMatchObject({ name: "LockEndedError", how: "released" });
      expect((await post(app, "/s")).status).toBe(200); // free for the next caller
    });
  },
);

describe("lock() with bodies that are complete when the handler returns", () => {
  it("a buffered body or none: released before the response, unread, with 2N requests", async () => {
    const { locks, values } = setup();
    const app = new Hono();
    app.post("/json", lock({ locks, key: () => "json" }), (c) => c.json({ ok: true }));
    app.post("/text", lock({ locks, key: () => "text" }), (c) => c.text("ok"));
    app.post("/none", lock({ locks, key: () => "none" }), (c) => c.body(null, 204));
    for (const path of ["json", "text", "none"]) {
      const before = requests(dev.cluster);
      const res = await post(app, `/${path}`); // the body is never read
      expect(res.status).toBe(path === "none" ? 204 : 200);
      // As before streaming support: in Node the release settled on every node before the answer.
      expect(await values(path)).toEqual([null, null, null]);
      expect(requests(dev.cluster) - before).toBe(2 * N); // one acquire and one release round
    }
  });

  it("HEAD of a streaming GET route: headers only, the producer is stopped and the key released", async () => {
    const { locks, goneEverywhere } = setup();
    const { app, seen } = streamingApp(locks, "stream");
    const res = await app.request("/s", { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.body).toBeNull();
    expect(await goneEverywhere("s")).toEqual([null, null, null]);
    expect(seen.aborts).toBe(1);
  });
});

describe("lock() with a body that would never end", () => {
  it("auto-extension stops at the budget: the signal aborts (LockLostError) before it, and a producer that honours it ends the body", async () => {
    const { locks, values } = setup();
    const app = new Hono();
    let held: Lock | undefined;
    let writes = 0;
    app.post(
      "/forever",
      // A lease far beyond the budget: only the budget can end this hold.
      lock({ locks, key: () => "forever", lease: 60_000, budget: () => budget.within(1_500) }),
      (c) => {
        held = c.var.lock;
        const signal = c.var.lock.signal;
        return streamText(c, async (s) => {
          while (!signal.aborted) {
            await s.write(".");
            writes++;
            await s.sleep(20);
          }
        });
      },
    );
    const res = await post(app, "/forever");
    const text = await res.text(); // ends only because the producer stopped at the abort
    expect(text.length).toBe(writes);
    expect(writes).toBeGreaterThan(1);
    expect(held?.signal.reason).toMatchObject({
      name: "LockLostError",
      message: expect.stringContaining("deadline"),
    });
    expect(await values("forever")).toEqual([null, null, null]);
  });
});

describe("lock() streaming on other hosts", () => {
  it("Workers (execution context): waitUntil covers the release at the body's end", async () => {
    const { locks, values, goneEverywhere } = setup();
    const { app, gates, seen } = streamingApp(locks, "stream");
    const pending: Promise<unknown>[] = [];
    const ctx = {
      waitUntil: (p: Promise<unknown>) => pending.push(p),
      passThroughOnException() {},
    };
    const res = await post(app, "/s", ctx);
    expect(pending).toHaveLength(1); // registered before the response goes out
    await new Promise((resolve) => setTimeout(resolve, 50)); // a release in waitUntil would land
    const token = seen.lock?.token;
    expect(await values("s")).toEqual([token, token, token]);
    const other = {
      waitUntil: (p: Promise<unknown>) => pending.push(p),
      passThroughOnException() {},
    };
    expect((await post(app, "/s", other)).status).toBe(409);
    for (const g of gates) g.open();
    expect(await res.text()).toBe("chunk0;chunk1;chunk2;");
    await Promise.all(pending);
    expect(await goneEverywhere("s")).toEqual([null, null, null]);
    expect(seen.lock?.signal.reason).toMatchObject({ name: "LockEndedError", how: "released" });
  });

  it("AWS Lambda (hono/aws-lambda handle): held while streaming, released before the invocation returns", async () => {
    const { locks, values } = setup();
    const { app, gates, seen } = streamingApp(locks, "streamText");
    const handler = handle(app);
    const first = handler(httpEventV2("POST", "/s"), fakeContext(20_000));
    gates[0]?.open();
    // The first invocation is inside its stream: a second one on the key is told it is busy.
    const started = performance.now();
    while (seen.abortedDuring.length === 0 && performance.now() - started < 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const token = seen.lock?.token;
    expect(await values("s")).toEqual([token, token, token]);
    const second = await handler(httpEventV2("POST", "/s"), fakeContext(20_000));
    expect(second.statusCode).toBe(409);
    for (const g of gates) g.open();
    const response = await first;
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe("chunk0;chunk1;chunk2;");
    // Nothing left in flight once the handler returned (Lambda freezes then).
    expect(await values("s")).toEqual([null, null, null]);
  });
});
