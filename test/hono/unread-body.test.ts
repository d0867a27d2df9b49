/**
 * A streamed body that nobody ever reads — an outer middleware replaced the response
 * (`c.res = …` after `await next()`), or `app.request()` whose body is dropped — must not keep
 * `lock()`'s key (or `idempotency()`'s claim) for the life of the process: after
 * `unreadBodyTimeout` without a first read it is cancelled as a client's cancel would be (the
 * producer is told) and the lock released. A body whose reading started in time is untouched.
 * Against a real 3-node dev cluster, in Node through `app.request()`.
 */
import { type Context, Hono } from "hono";
import { stream } from "hono/streaming";
import { describe, expect, it } from "vitest";
import { createLocks, isConfigurationError, type Lock } from "../../src";
import { idempotency, lock } from "../../src/adapters/hono";
import { eventually, readBack, requests, resetCluster, sleep } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });
const N = 3;
/** The bound of these tests: far below the lease and the 5 s default, so only the bound ends it. */
const UNREAD = 200;

function setup() {
  resetCluster(dev.cluster);
  const prefix = `t:unread:${crypto.randomUUID()}:`;
  const locks = createLocks({ nodes: dev.cluster.nodes, prefix, lease: 2_000 });
  const values = (key: string) => readBack(dev, N, `${prefix}${key}`);
  const gone = async (key: string) => (await values(key)).every((v) => v === null);
  return { locks, values, gone };
}

/** A producer that writes until it is told to stop; records the lock and its aborts. */
function producer() {
  const seen = { lock: undefined as Lock | undefined, aborts: 0, writes: 0 };
  const handler = (c: Context) => {
    seen.lock = (c.get("lock") ?? c.get("idempotencyClaim")) as Lock;
    return stream(c, async (s) => {
      s.onAbort(() => {
        seen.aborts++;
      });
      while (!s.aborted) {
        await s.write("x");
        seen.writes++;
        await s.sleep(10);
      }
    });
  };
  return { seen, handler };
}

describe("lock(): a streamed body nobody reads", () => {
  it("an outer middleware replaces the response: the body is cancelled (producer told) and the key released", async () => {
    const { locks, values, gone } = setup();
    const { seen, handler } = producer();
    const app = new Hono();
    app.use("/s", async (c, next) => {
      await next();
      c.res = c.json({ wrapped: true }); // an envelope / error-page middleware
    });
    app.get("/s", lock({ locks, key: () => "k", unreadBodyTimeout: UNREAD }), handler);
    app.get("/direct", lock({ locks, key: () => "k" }), (c) => c.text("ok"));

    const res = await app.request("/s");
    expect(await res.json()).toEqual({ wrapped: true });
    const token = seen.lock?.token;
    expect(await values("k")).toEqual([token, token, token]); // the wrapped body has not ended
    await eventually(() => gone("k"));
    expect(seen.aborts).toBe(1);
    expect(seen.lock?.signal.reason).toMatchObject({ name: "LockEndedError", how: "released" });
    // Nothing is held any more: no extension reaches the nodes, and the next caller gets the key.
    const before = requests(dev.cluster);
    await sleep(1_000); // half the lease: an auto-extension would have run by now
    expect(requests(dev.cluster) - before).toBe(0);
    expect((await app.request("/direct")).status).toBe(200);
  });

  it("app.request() whose body is never read: released, and a late reader gets an error, not a truncated body", async () => {
    const { locks, gone } = setup();
    const { seen, handler } = producer();
    const app = new Hono();
    app.get("/s", lock({ locks, key: () => "k", unreadBodyTimeout: UNREAD }), handler);
    const res = await app.request("/s");
    expect(res.status).toBe(200);
    await eventually(() => gone("k"));
    expect(seen.aborts).toBe(1);
    await expect(res.text()).rejects.toMatchObject({ name: "UnreadBodyError" });
  });

  it("a complete body of several chunks, never read: released after the bound as well", async () => {
    const { locks, gone } = setup();
    const app = new Hono();
    let held: Lock | undefined;
    app.get("/bytes", lock({ locks, key: () => "b", unreadBodyTimeout: UNREAD }), (c) => {
      held = c.var.lock;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 4; i++) controller.enqueue(new TextEncoder().encode(`${i};`));
          controller.close();
        },
      });
      return c.body(body);
    });
    const res = await app.request("/bytes");
    expect(res.status).toBe(200);
    await eventually(() => gone("b"));
    expect(held?.signal.reason).toMatchObject({ name: "LockEndedError", how: "released" });
  });

  it("a body whose reading starts in time streams to its end past the bound, under the lock", async () => {
    const { locks, values } = setup();
    const app = new Hono();
    let held: Lock | undefined;
    const CHUNKS = 5;
    app.get("/slow", lock({ locks, key: () => "slow", unreadBodyTimeout: UNREAD }), (c) => {
      held = c.var.lock;
      return stream(c, async (s) => {
        for (let i = 0; i < CHUNKS; i++) {
          await s.write(`${i};`);
          await s.sleep(UNREAD / 2); // the whole body takes 2.5 bounds
        }
      });
    });
    const res = await app.request("/slow");
    expect(await res.text()).toBe("0;1;2;3;4;");
    expect(held?.signal.reason).toMatchObject({ name: "LockEndedError", how: "released" });
    expect(await values("slow")).toEqual([null, null, null]);
  });

  it("unreadBodyTimeout is validated when the middleware is built", () => {
    const { locks } = setup();
    for (const bad of [0, -1, 1.5, "5s", Number.NaN]) {
      let caught: unknown;
      try {
        lock({ locks, key: () => "k", unreadBodyTimeout: bad as number });
      } catch (error) {
        caught = error;
      }
      expect(isConfigurationError(caught)).toBe(true);
      expect(caught).toMatchObject({ option: "unreadBodyTimeout" });
    }
  });
});

describe("idempotency(): a streamed body nobody reads", () => {
  it("an outer middleware replaces the response: the body is cancelled and the claim ends (completed without replay)", async () => {
    resetCluster(dev.cluster);
    const locks = createLocks({
      nodes: dev.cluster.nodes,
      prefix: `t:unread-idem:${crypto.randomUUID()}:`,
      lease: 2_000,
    });
    const { seen, handler } = producer();
    const app = new Hono();
    app.use("/x", async (c, next) => {
      await next();
      if (c.req.header("x-wrap") === "1") c.res = c.json({ wrapped: true });
    });
    app.post("/x", idempotency({ locks }), handler);
    const send = (wrap: boolean) =>
      app.request("/x", {
        method: "POST",
        body: "x",
        headers: { "Idempotency-Key": '"k"', ...(wrap ? { "x-wrap": "1" } : {}) },
      });
    expect(await (await send(true)).json()).toEqual({ wrapped: true });
    // The claim's own bound is the 5 s default (not configurable on idempotency()).
    await eventually(() => seen.lock?.signal.aborted === true, 10_000);
    expect(seen.lock?.signal.reason).toMatchObject({ name: "LockEndedError", how: "completed" });
    expect(seen.aborts).toBe(1);
    // The handler ran and its body was not delivered: kept without replay, never run again.
    const retry = await send(false);
    expect(retry.status).toBe(409);
    expect(retry.headers.get("idempotency-replayed")).toBeNull();
    await retry.text();
  });
});
