/**
 * The Hono `lock()` middleware inside workerd, with a real `ExecutionContext`, against the dev
 * cluster: mutual exclusion, parallelism across keys, release in `waitUntil`, quorum loss, handler
 * errors.
 */
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import type { Locks } from "../../src";
import { lock } from "../../src/adapters/hono";
import {
  admin,
  call,
  healAll,
  injectFault,
  pttlOnceGone,
  sleep,
  testLocks,
} from "./support/cluster";

/** An app whose handler holds for `holdMs` and records how many handlers overlap. */
function probeApp(locks: Locks, options: { wait?: number; holdMs?: number } = {}) {
  const { wait = 0, holdMs = 150 } = options;
  const seen = { active: 0, maxActive: 0, ran: 0 };
  const app = new Hono();
  app.post(
    "/jobs/:id",
    lock({ locks, key: (c) => `job:${c.req.param("id")}`, wait }),
    async (c) => {
      seen.active += 1;
      seen.ran += 1;
      seen.maxActive = Math.max(seen.maxActive, seen.active);
      await sleep(holdMs);
      seen.active -= 1;
      return c.json({ fence: c.var.lock.fence ?? null });
    },
  );
  return { app, seen };
}

afterEach(healAll);

describe("lock() inside workerd", () => {
  it("lets one request for a key run; the others get 409 with Retry-After", async () => {
    const { locks } = testLocks();
    const { app, seen } = probeApp(locks, { holdMs: 300 });
    const calls = Array.from({ length: 6 }, () => call(app, "/jobs/a"));
    const responses = await Promise.all(calls.map((c) => c.response));
    await Promise.all(calls.map((c) => c.settled));

    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
    expect(seen).toMatchObject({ ran: 1, maxActive: 1 });
    for (const res of responses.filter((r) => r.status === 409)) {
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      // A short hint, not the holder's auto-extended lease.
      expect(res.headers.get("retry-after")).toBe("1");
      expect(await res.json()).toMatchObject({ status: 409, title: expect.any(String) });
    }
  });

  it("with wait, runs every request for a key, one at a time", async () => {
    const { locks } = testLocks();
    const { app, seen } = probeApp(locks, { wait: 10_000, holdMs: 100 });
    const calls = Array.from({ length: 4 }, () => call(app, "/jobs/serial"));
    const responses = await Promise.all(calls.map((c) => c.response));
    await Promise.all(calls.map((c) => c.settled));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(seen).toMatchObject({ ran: 4, maxActive: 1 });
  });

  it("runs requests for different keys in parallel", async () => {
    const { locks } = testLocks();
    const { app, seen } = probeApp(locks, { holdMs: 400 });
    const calls = ["a", "b", "c", "d"].map((id) => call(app, `/jobs/${id}`));
    const responses = await Promise.all(calls.map((c) => c.response));
    await Promise.all(calls.map((c) => c.settled));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(seen.maxActive).toBe(4);
  });

  it("releases in waitUntil: the response does not wait for the release", async () => {
    const { locks, events } = testLocks();
    const app = new Hono();
    app.post("/slow-release", lock({ locks, key: () => "r" }), async (c) => {
      // The next request each node sees is the release: slow it down (below the 500 ms request
      // timeout of a 10 s lease).
      await Promise.all(
        [0, 1, 2].map((i) => injectFault(i, { kind: "latency", ms: 300, count: 1 })),
      );
      return c.text("done");
    });
    const started = performance.now();
    const { response, settled } = call(app, "/slow-release");
    const res = await response;
    const answeredAfter = performance.now() - started;
    expect(res.status).toBe(200);
    expect(events.some((e) => e.type === "release")).toBe(false);

    await settled;
    const releasedAfter = performance.now() - started;
    expect(events.find((e) => e.type === "release")).toMatchObject({ result: "released" });
    expect(await pttlOnceGone(locks, "r")).toBe(-2);
    expect(answeredAfter / releasedAfter).toBeLessThan(0.5);
  });

  it("answers 503 with Retry-After when a majority of nodes is down", async () => {
    const { locks } = testLocks({ lease: 2_000 });
    const { app, seen } = probeApp(locks);
    await Promise.all([1, 2].map((i) => injectFault(i, { kind: "status", status: 502 })));
    const { response, settled } = call(app, "/jobs/down");
    const res = await response;
    await settled;
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toMatchObject({ status: 503, type: expect.any(String) });
    expect(seen.ran).toBe(0);
  });

  it("answers 503 when paused nodes leave no majority", async () => {
    const { locks } = testLocks({ lease: 2_000 });
    const { app, seen } = probeApp(locks);
    await Promise.all([0, 2].map((i) => admin(i, "POST", "pause")));
    const res = await call(app, "/jobs/paused").response;
    expect(res.status).toBe(503);
    expect(seen.ran).toBe(0);
  });

  it("releases the lock when the handler throws, and passes the error on", async () => {
    const { locks, events } = testLocks();
    const app = new Hono();
    let seenError: unknown;
    app.onError((error, c) => {
      seenError = error;
      return c.text("handler failed", 500);
    });
    const boom = new Error("boom");
    app.post("/throws", lock({ locks, key: () => "t" }), () => {
      throw boom;
    });
    const { response, settled } = call(app, "/throws");
    const res = await response;
    await settled;
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("handler failed");
    expect(seenError).toBe(boom);
    expect(events.find((e) => e.type === "release")).toMatchObject({ result: "released" });
    expect(await pttlOnceGone(locks, "t")).toBe(-2);
  });
});
