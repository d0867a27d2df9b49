/**
 * `lock()` inside workerd when an outer middleware replaces the streamed response the route
 * answered (`c.res = …` after `await next()`): nobody ever reads the watched body, so after
 * `unreadBodyTimeout` it is cancelled (the stream callback's `onAbort` runs), the key is released
 * on every node, and the request's `waitUntil` settles — well before the 30 s fetch budget.
 */
import { Hono } from "hono";
import { stream } from "hono/streaming";
import { afterEach, describe, expect, it } from "vitest";
import type { Lock } from "../../src";
import { lock } from "../../src/adapters/hono";
import { call, healAll, maxPttl, sleep, testLocks } from "./support/cluster";

afterEach(healAll);

describe("lock() inside workerd: a streamed body nobody reads", () => {
  it("an outer middleware replaces the response: the body is cancelled, the key released and waitUntil settles", async () => {
    const { locks, events } = testLocks({ lease: 2_000 });
    const seen = { lock: undefined as Lock | undefined, aborts: 0 };
    const app = new Hono();
    app.use("/a", async (c, next) => {
      await next();
      c.res = new Response("replaced");
    });
    app.post("/a", lock({ locks, key: () => "a", unreadBodyTimeout: 200 }), (c) => {
      seen.lock = c.var.lock;
      return stream(c, async (s) => {
        const told = new Promise<void>((resolve) =>
          s.onAbort(() => {
            seen.aborts++;
            resolve();
          }),
        );
        await s.write("x");
        await told; // the rest would be written here; the producer waits until it is told to stop
      });
    });
    const { response, settled } = call(app, "/a");
    const res = await response;
    expect(await res.text()).toBe("replaced");
    // Bounded only so that a hold that never ends fails here rather than at the test timeout.
    const settledInTime = await Promise.race([
      settled.then(() => true),
      sleep(10_000).then(() => false),
    ]);
    expect(settledInTime).toBe(true);
    expect(await maxPttl(locks, "a")).toBe(-2);
    expect(seen.aborts).toBe(1);
    expect(seen.lock?.signal.reason).toMatchObject({ name: "LockEndedError", how: "released" });
    expect(events.filter((e) => e.type === "release")).toMatchObject([{ result: "released" }]);
  });
});
