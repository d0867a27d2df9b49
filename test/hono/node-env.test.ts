/**
 * The Workers-style `locks: (c) => createLocks({ nodes: nodesFromEnv(c.env) })` run on Node, where
 * Hono's `c.env` is the server's bindings (`@hono/node-server` passes `{ incoming, outgoing }`), not
 * `process.env`: the request fails with a ConfigurationError that says so and what to pass, while
 * `process.env` has the variable. No node is called (the error comes before any request).
 */
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { createLocks, nodesFromEnv } from "../../src";
import { lock } from "../../src/adapters/hono";

const saved = process.env.EDGELOCK_NODES;
afterEach(() => {
  if (saved === undefined) delete process.env.EDGELOCK_NODES;
  else process.env.EDGELOCK_NODES = saved;
});

describe("lock() on Node with a Workers-style c.env lookup", () => {
  it("answers 500 with an error saying c.env is not process.env here, and what to pass", async () => {
    process.env.EDGELOCK_NODES = JSON.stringify([
      { url: "http://127.0.0.1:9", token: "tok-secret" },
    ]);
    const errors: Error[] = [];
    const app = new Hono();
    app.onError((error, c) => {
      errors.push(error);
      return c.text("failed", 500);
    });
    app.post(
      "/invoices/:id/charge",
      lock({
        locks: (c) => createLocks({ nodes: nodesFromEnv(c.env as object) }),
        key: (c) => `invoice:${c.req.param("id")}`,
      }),
      (c) => c.json({ charged: c.req.param("id") }),
    );
    // What @hono/node-server passes as the env of every request.
    const response = await app.request(
      "/invoices/42/charge",
      { method: "POST" },
      { incoming: {}, outgoing: {} },
    );
    expect(response.status).toBe(500);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.name).toBe("ConfigurationError");
    expect(errors[0]?.message).toContain(
      "EDGELOCK_NODES is set in process.env, but the env object given is not process.env",
    );
    expect(errors[0]?.message).toContain("pass process.env");
    expect(errors[0]?.message).not.toContain("tok-secret");
  });
});
