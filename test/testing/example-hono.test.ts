import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { idempotency, lock } from "../../src/adapters/hono/index";
import { createLocks, type Locks } from "../../src/index";
import { manualClock, memoryNodes } from "../../src/testing/index";

// The app under test. In your project it lives in its own module and takes its `Locks` (in
// production: createLocks({ nodes: nodesFromEnv(env) })).
function createApp(locks: Locks) {
  const app = new Hono();
  let charges = 0;
  app.post("/invoices/:id/charge", idempotency({ locks }), async (c) => {
    charges++;
    return c.json({ invoice: c.req.param("id"), charge: charges }, 201);
  });
  app.post(
    "/reports/:id/rebuild",
    lock({ locks, key: (c) => `report:${c.req.param("id")}` }),
    async (c) => c.json({ rebuilt: c.req.param("id") }),
  );
  return app;
}

// Three independent in-memory nodes per test, on a clock the test moves.
function setup() {
  const clock = manualClock();
  const nodes = memoryNodes(3, { clock });
  const locks = createLocks({ nodes });
  return { clock, nodes, locks, app: createApp(locks) };
}

const post = (path: string, headers: Record<string, string> = {}) =>
  new Request(`http://app.test${path}`, { method: "POST", headers });

describe("POST /invoices/:id/charge", () => {
  it("a retry with the same Idempotency-Key gets the first response, replayed", async () => {
    const { app } = setup();
    const first = await app.request(post("/invoices/42/charge", { "Idempotency-Key": "k-1" }));
    const retry = await app.request(post("/invoices/42/charge", { "Idempotency-Key": "k-1" }));
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("Idempotency-Replayed")).toBe("true");
    expect(await retry.json()).toEqual({ invoice: "42", charge: 1 });
  });

  it("another key charges again", async () => {
    const { app } = setup();
    await app.request(post("/invoices/42/charge", { "Idempotency-Key": "k-1" }));
    const other = await app.request(post("/invoices/42/charge", { "Idempotency-Key": "k-2" }));
    expect(await other.json()).toEqual({ invoice: "42", charge: 2 });
  });
});

describe("POST /reports/:id/rebuild", () => {
  it("answers 409 while someone else holds the report's lock, 200 once it is released", async () => {
    const { app, locks } = setup();
    const held = await locks.acquire("report:7");
    expect((await app.request(post("/reports/7/rebuild"))).status).toBe(409);
    await held.release();
    expect((await app.request(post("/reports/7/rebuild"))).status).toBe(200);
  });

  it("runs again once the lock of a holder that crashed has expired", async () => {
    const { app, locks, clock, nodes } = setup();
    await locks.acquire("report:7", { lease: 10_000, autoExtend: false }); // never released
    expect(nodes.map((node) => node.pttl("lock:report:7"))).toEqual([10_000, 10_000, 10_000]);
    expect((await app.request(post("/reports/7/rebuild"))).status).toBe(409);
    clock.advance(10_001); // past the lease on every node
    expect((await app.request(post("/reports/7/rebuild"))).status).toBe(200);
  });
});
