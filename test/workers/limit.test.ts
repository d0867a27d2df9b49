/**
 * The Hono `limit()` middleware inside workerd, with a real `ExecutionContext` (releases in
 * `waitUntil`), against the dev cluster: a burst of 3P requests never has more than P handlers
 * running (counted from the handlers' own start and end), the rest 429 with `Retry-After`; `wait`
 * lets the burst through; a streamed body keeps its permit until it ends; 503 with a majority of
 * nodes failing.
 */
import { Hono } from "hono";
import { stream } from "hono/streaming";
import { afterEach, describe, expect, it } from "vitest";
import { type Locks, semaphore } from "../../src";
import { limit } from "../../src/adapters/hono";
import { call, healAll, injectFault, sleep, testLocks } from "./support/cluster";

const P = 3;

/** An app whose handler holds `holdMs` under `limit()`, counting the handlers that overlap. */
function probeApp(locks: Locks, wait: number, holdMs: number) {
  const seen = { active: 0, most: 0, ran: 0 };
  const app = new Hono();
  app.post("/run", limit({ locks, key: "api", permits: P, wait }), async (c) => {
    seen.active++;
    seen.ran++;
    seen.most = Math.max(seen.most, seen.active);
    await sleep(holdMs);
    seen.active--;
    return c.text(`slot ${c.var.permit.slot}`);
  });
  return { app, seen };
}

afterEach(healAll);

describe("limit() inside workerd", () => {
  it("a burst of 3P: never more than P handlers, the rest 429 with the problem", async () => {
    const { locks } = testLocks({ lease: 5_000, requestTimeout: 2_000 });
    const { app, seen } = probeApp(locks, 0, 300);
    const calls = Array.from({ length: 3 * P }, () => call(app, "/run"));
    const responses = await Promise.all(calls.map((c) => c.response));
    await Promise.all(calls.map((c) => c.settled));
    const statuses = responses.map((r) => r.status);
    expect(seen.most).toBeLessThanOrEqual(P);
    expect(seen.ran, `statuses ${statuses.join(" ")}`).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 200).length).toBe(seen.ran);
    for (const res of responses.filter((r) => r.status !== 200)) {
      expect(res.status, `statuses ${statuses.join(" ")}: ${await res.clone().text()}`).toBe(429);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(await res.json()).toMatchObject({
        type: "urn:edgelock:problem:at-capacity",
        title: "Too Many Requests",
        status: 429,
      });
    }
    // Every release, handed to waitUntil, settled with the invocations.
    expect(await semaphore(locks, "api", { permits: P }).inspect()).toMatchObject({ held: 0 });
  });

  it("with wait, the burst all runs, at most P at once", async () => {
    const { locks } = testLocks({ lease: 5_000, requestTimeout: 2_000 });
    // On the free plan's 50 subrequests: a waiter stuck in a split once spent them on looks every
    // 20 ms and answered 429 (docs/TESTING.md); test/workers/subrequests.test.ts counts them.
    const { app, seen } = probeApp(locks, 10_000, 150);
    const calls = Array.from({ length: 3 * P }, () => call(app, "/run"));
    const responses = await Promise.all(calls.map((c) => c.response));
    await Promise.all(calls.map((c) => c.settled));
    expect(responses.map((r) => r.status)).toEqual(Array(3 * P).fill(200));
    expect(seen.ran).toBe(3 * P);
    expect(seen.most).toBeLessThanOrEqual(P);
  });

  it("a streamed body keeps its permit until it ends", async () => {
    const { locks } = testLocks({ lease: 5_000, requestTimeout: 2_000 });
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const app = new Hono();
    app.post("/run", limit({ locks, key: "s", permits: 1 }), (c) =>
      stream(c, async (s) => {
        await s.write("first;");
        await gate;
        await s.write("last");
      }),
    );
    const first = call(app, "/run");
    const res = await first.response;
    expect(res.status).toBe(200);
    const second = call(app, "/run");
    expect((await second.response).status).toBe(429);
    await second.settled;
    open();
    expect(await res.text()).toBe("first;last");
    await first.settled;
    const third = call(app, "/run");
    const next = await third.response;
    expect(next.status).toBe(200);
    await next.text();
    await third.settled;
  });

  it("answers 503 with a majority of nodes failing; the handler does not run", async () => {
    const { locks } = testLocks({ lease: 2_000 });
    const { app, seen } = probeApp(locks, 0, 10);
    await Promise.all([1, 2].map((i) => injectFault(i, { kind: "status", status: 502 })));
    const original = console.error;
    console.error = () => undefined;
    try {
      const { response, settled } = call(app, "/run");
      const res = await response;
      await settled;
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(await res.json()).toMatchObject({ type: "urn:edgelock:problem:lock-unavailable" });
    } finally {
      console.error = original;
    }
    expect(seen.ran).toBe(0);
  });
});
