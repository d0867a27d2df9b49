/**
 * The Hono `lock()` middleware with a streamed body inside workerd, with a real `ExecutionContext`,
 * against the dev cluster: the key stays held while `hono/streaming`'s `stream()` writes after the
 * handler returned, a second request gets 409, and the release at the body's end runs in
 * `waitUntil` (the execution context settles only after it, and then the key is gone from every
 * node). A client that cancels the body releases too.
 */
import { Hono } from "hono";
import { stream } from "hono/streaming";
import { afterEach, describe, expect, it } from "vitest";
import type { Lock, Locks } from "../../src";
import { lock } from "../../src/adapters/hono";
import { call, healAll, testLocks } from "./support/cluster";

const CHUNKS = 3;

function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** `POST /s` streams CHUNKS chunks under `lock()`, each once its gate opens. */
function streamingApp(locks: Locks) {
  const gates = Array.from({ length: CHUNKS }, () => gate());
  const seen = { lock: undefined as Lock | undefined, abortedDuring: [] as boolean[], aborts: 0 };
  const app = new Hono();
  app.post("/s", lock({ locks, key: () => "s" }), (c) => {
    const held = c.var.lock;
    seen.lock = held;
    return stream(c, async (s) => {
      s.onAbort(() => {
        seen.aborts++;
      });
      for (let i = 0; i < CHUNKS; i++) {
        await gates[i]?.promise;
        seen.abortedDuring.push(held.signal.aborted);
        await s.write(`chunk${i};`);
      }
    });
  });
  return { app, gates, seen };
}

/** Whether `p` has settled by the time the current task yields once. */
async function isSettled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => {
    done = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  return done;
}

/** The key's value on every node: inspect() reports each node's own view. */
async function holders(locks: Locks, key: string): Promise<string[]> {
  const { nodes } = await locks.inspect(key);
  return nodes.map((o) => o.status);
}

afterEach(healAll);

describe("lock() with a streamed body inside workerd", () => {
  it("holds the key while streaming (409 for another request), then waitUntil releases it everywhere", async () => {
    const { locks, events } = testLocks();
    const { app, gates, seen } = streamingApp(locks);
    const first = call(app, "/s");
    const res = await first.response;
    expect(res.status).toBe(200);
    expect(await holders(locks, "s")).toEqual(["held", "held", "held"]);
    const second = call(app, "/s");
    expect((await second.response).status).toBe(409);
    await second.settled;

    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    gates[0]?.open();
    text += decoder.decode((await reader.read()).value);
    // The handler returned long ago; its execution context still waits for the body's end.
    expect(await isSettled(first.settled)).toBe(false);
    expect(await holders(locks, "s")).toEqual(["held", "held", "held"]);
    expect(seen.lock?.signal.aborted).toBe(false);
    for (const g of gates) g.open();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    expect(text).toBe("chunk0;chunk1;chunk2;");
    expect(seen.abortedDuring).toEqual([false, false, false]);
    await first.settled; // waitUntil: every node answered the release
    expect(await holders(locks, "s")).toEqual(["absent", "absent", "absent"]);
    expect(events.filter((e) => e.type === "release")).toMatchObject([{ result: "released" }]);
    expect(seen.lock?.signal.reason).toMatchObject({ name: "LockEndedError", how: "released" });
  });

  it("a client that cancels the body releases the key through waitUntil", async () => {
    const { locks } = testLocks();
    const { app, gates, seen } = streamingApp(locks);
    const first = call(app, "/s");
    const reader = ((await first.response).body as ReadableStream<Uint8Array>).getReader();
    gates[0]?.open();
    await reader.read();
    expect(await holders(locks, "s")).toEqual(["held", "held", "held"]);
    await reader.cancel("client went away");
    await first.settled;
    expect(await holders(locks, "s")).toEqual(["absent", "absent", "absent"]);
    expect(seen.aborts).toBe(1);
    const next = call(app, "/s");
    expect((await next.response).status).toBe(200);
    for (const g of gates) g.open();
    await (await next.response).text();
    await next.settled;
  });
});
