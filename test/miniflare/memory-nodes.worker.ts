/**
 * A Worker whose locks live on memory nodes (`edgelock/testing`), for `memory-nodes.test.ts`:
 * bundled with esbuild like the published entry (fengari through scripts/fengari-plugin.ts) and
 * run by Miniflare in workerd without `nodejs_compat`. The nodes and their manual clock belong to
 * the isolate, so every request sees the same three nodes.
 *
 * - `POST /invoices/:id/charge` behind `idempotency()`: 201 with the count of charges so far.
 * - `POST /reports/:id/rebuild` behind `lock()`.
 * - `POST /hold/:id`: takes `report:<id>` for 10 s and never releases it (a holder that crashed).
 * - `POST /advance?ms=`: moves the nodes' clock. `GET /pttl/:key`: the key's PTTL on each node.
 * - `POST /script`: runs a user's script on the first node (the request's body), answers its
 *   result or error text.
 *
 * @module
 */
import { Hono } from "hono";
import { createLocks, type Locks } from "../../src";
import { idempotency, lock } from "../../src/adapters/hono";
import { manualClock, memoryNodes } from "../../src/testing";

// Nodes can be made in global scope; a `Locks` cannot (it draws random ids, which workerd allows
// only inside a handler): one per isolate, made by the first request.
const clock = manualClock();
const nodes = memoryNodes(3, { clock });
let shared: Locks | undefined;
const locks = () => (shared ??= createLocks({ nodes }));
let charges = 0;

const app = new Hono();

app.post("/invoices/:id/charge", idempotency({ locks: locks }), async (c) => {
  charges++;
  return c.json({ invoice: c.req.param("id"), charge: charges }, 201);
});

app.post(
  "/reports/:id/rebuild",
  lock({ locks: locks, key: (c) => `report:${c.req.param("id")}` }),
  async (c) => c.json({ rebuilt: c.req.param("id") }),
);

app.post("/hold/:id", async (c) => {
  const held = await locks().acquire(`report:${c.req.param("id")}`, { lease: 10_000 });
  return c.json({ fence: held.fence });
});

app.post("/advance", (c) => {
  clock.advance(Number(c.req.query("ms")));
  return c.body(null, 204);
});

app.get("/pttl/:key", (c) => c.json(nodes.map((node) => node.pttl(c.req.param("key")))));

app.post("/script", async (c) => {
  const node = nodes[0];
  const source = await c.req.text();
  const result = await node?.eval(source, ["user:n"], []).then(
    (value) => ({ value }),
    (error: Error) => ({ error: error.message, name: error.constructor.name }),
  );
  return c.json(result ?? null);
});

export default app;
