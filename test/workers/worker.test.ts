/**
 * The deployable Worker (functions/worker.ts, configured by wrangler.toml) end to end inside
 * workerd: `exports.default.fetch` and `.scheduled` as the runtime calls them.
 */
import { createScheduledController } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../functions/worker";
import { createLocks } from "../../src";
import { nodes } from "./support/cluster";

const charge = (id: string) =>
  exports.default.fetch(`https://worker.test/invoices/${id}/charge`, { method: "POST" });

/** The same lock namespace as the Worker (wrangler.toml `LOCK_PREFIX`). */
const workerLocks = () => createLocks({ nodes, prefix: env.LOCK_PREFIX });

describe("functions/worker.ts", () => {
  it("charges an invoice once under a burst of concurrent requests", async () => {
    const id = crypto.randomUUID();
    const responses = await Promise.all(Array.from({ length: 5 }, () => charge(id)));
    const ok = responses.filter((r) => r.status === 200);
    const busy = responses.filter((r) => r.status === 409);
    expect(ok).toHaveLength(1);
    expect(busy).toHaveLength(4);
    expect(await ok[0]?.json()).toMatchObject({ id, status: "charged", charges: 1 });
    for (const res of busy) {
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      await res.arrayBuffer();
    }

    // Wait for the holder's release (waitUntil), then a retry finds the invoice paid.
    const locks = workerLocks();
    for (let i = 0; i < 50 && (await locks.inspect(`invoice:${id}`)).held; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const again = await charge(id);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ status: "already_paid", charges: 1 });
  });

  it("charges different invoices in parallel", async () => {
    const ids = Array.from({ length: 4 }, () => crypto.randomUUID());
    const responses = await Promise.all(ids.map(charge));
    const bodies = await Promise.all(responses.map((r) => r.json()));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(bodies.map((b) => (b as { status: string }).status)).toEqual(Array(4).fill("charged"));
  });

  it("shows a held lock to operators on GET /locks/:key", async () => {
    const locks = workerLocks();
    const held = await locks.acquire("ops:demo", { lease: 5_000 });
    try {
      const res = await exports.default.fetch("https://worker.test/locks/ops:demo");
      expect(res.status).toBe(200);
      const body = (await res.json()) as { held: boolean; nodes: { pttl: number | null }[] };
      expect(body.held).toBe(true);
      expect(body.nodes).toHaveLength(nodes.length);
      for (const node of body.nodes) expect(node.pttl).toBeGreaterThan(0);
      expect(JSON.stringify(body)).not.toContain(held.token);
    } finally {
      await held.release();
    }
  });

  it("skips the cron rebuild while the report lock is held", async () => {
    const locks = workerLocks();
    const rebuild = await locks.acquire("reports:daily", { lease: 10_000 });
    try {
      const controller = createScheduledController({
        cron: "0 3 * * *",
        scheduledTime: new Date(),
      });
      await expect(worker.scheduled(controller, env)).resolves.toBeUndefined();
      // Still ours: the cron neither waited for it nor took it over.
      await expect(rebuild.extend()).resolves.toMatchObject({ validUntil: expect.any(Number) });
    } finally {
      await rebuild.release();
    }
  });
});
