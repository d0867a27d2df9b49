/**
 * `idempotency()` inside workerd, through the deployable Worker's charge route
 * (functions/worker.ts): replay, 409 while the first runs, 422, 400.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const charge = (id: string, key: string, body = '{"amount":5}') =>
  exports.default.fetch(`https://worker.test/invoices/${id}/charge`, {
    method: "POST",
    headers: { "Idempotency-Key": key, "Content-Type": "application/json" },
    body,
  });

describe("Idempotency-Key in workerd (functions/worker.ts)", () => {
  it("one charge per key: concurrent duplicates get 409, later retries the replayed answer", async () => {
    const id = crypto.randomUUID();
    const key = `"${crypto.randomUUID()}"`;
    const burst = await Promise.all(Array.from({ length: 4 }, () => charge(id, key)));
    const statuses = burst.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409]);
    const first = burst.find((r) => r.status === 200) as Response;
    const firstBody = await first.text();
    expect(JSON.parse(firstBody)).toMatchObject({ id, status: "charged", charges: 1 });
    for (const res of burst.filter((r) => r.status === 409)) {
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      // A short hint, not the claim's auto-extended lease.
      expect(res.headers.get("retry-after")).toBe("1");
      await res.arrayBuffer();
    }
    const retry = await charge(id, key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotency-replayed")).toBe("true");
    expect(await retry.text()).toBe(firstBody);
  });

  it("another body with the same key is 422; its bare form replays; a malformed key is 400", async () => {
    const id = crypto.randomUUID();
    const key = `"${crypto.randomUUID()}"`;
    expect((await charge(id, key)).status).toBe(200);
    const reused = await charge(id, key, '{"amount":500}');
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({ title: "Idempotency-Key reused", status: 422 });
    // The bare form of a key is the same key (Stripe-style clients send it unquoted).
    const bare = await charge(id, key.slice(1, -1));
    expect([bare.status, bare.headers.get("idempotency-replayed")]).toEqual([200, "true"]);
    await bare.arrayBuffer();
    const bad = await charge(id, '"not-closed');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ title: "Invalid Idempotency-Key", status: 400 });
  });
});
