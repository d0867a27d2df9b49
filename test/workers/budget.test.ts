/**
 * TTL sizing and subrequest accounting of the `lock()` middleware inside workerd: TTLs read back
 * from the nodes, request counts from the nodes' own stats.
 */
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { type Budget, budget } from "../../src";
import { lock } from "../../src/adapters/hono";
import {
  call,
  healAll,
  maxPttl,
  nodes,
  pttlOnceGone,
  resetStats,
  sleep,
  testLocks,
  totalRequests,
} from "./support/cluster";

const N = nodes.length;

afterEach(healAll);

describe("TTL sizing", () => {
  it("a budget shorter than the lease sizes the TTL to the remaining budget plus margin", async () => {
    const { locks } = testLocks();
    const lease = 20_000;
    let pttl = 0;
    const app = new Hono();
    app.post(
      "/short",
      lock({
        locks,
        key: () => "short",
        lease,
        budget: () => budget.within(2_000, { margin: 500 }),
      }),
      async (c) => {
        pttl = await maxPttl(locks, "short");
        return c.text("ok");
      },
    );
    const { response, settled } = call(app, "/short");
    expect((await response).status).toBe(200);
    await settled;
    // ttl = min(lease, remaining + margin) = ~2500 ms, well below the lease.
    expect(pttl).toBeGreaterThan(2_000);
    expect(pttl).toBeLessThanOrEqual(2_500);
    expect(pttl / lease).toBeLessThan(0.2);
  });

  it("without a budget option, Workers get the default fetch budget (30 s wall)", async () => {
    const { locks } = testLocks();
    const lease = 120_000;
    let pttl = 0;
    const app = new Hono();
    app.post("/default", lock({ locks, key: () => "default", lease }), async (c) => {
      pttl = await maxPttl(locks, "default");
      return c.text("ok");
    });
    const { response, settled } = call(app, "/default");
    expect((await response).status).toBe(200);
    await settled;
    // budget.workersFetch(): 30 s wall + 1 s margin, not the 120 s lease.
    expect(pttl).toBeGreaterThan(29_000);
    expect(pttl).toBeLessThanOrEqual(31_000);
  });

  it("a budget longer than the lease keeps TTL = lease, extended while the handler runs", async () => {
    const { locks, events } = testLocks();
    const lease = 600;
    const samples: number[] = [];
    let aborted = true;
    const app = new Hono();
    app.post(
      "/long",
      lock({ locks, key: () => "long", lease, budget: () => budget.within(20_000) }),
      async (c) => {
        const started = performance.now();
        // Run for four leases, reading the TTL back from the nodes as we go.
        while (performance.now() - started < 4 * lease) {
          samples.push(await maxPttl(locks, "long"));
          await sleep(lease / 4);
        }
        aborted = c.var.lock.signal.aborted;
        return c.text("ok");
      },
    );
    const { response, settled } = call(app, "/long");
    expect((await response).status).toBe(200);
    await settled;
    expect(aborted).toBe(false);
    expect(samples.length).toBeGreaterThan(8);
    for (const pttl of samples) {
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(lease);
    }
    expect(
      events.filter((e) => e.type === "extend" && e.result === "extended").length,
    ).toBeGreaterThanOrEqual(3);
    expect(await pttlOnceGone(locks, "long")).toBe(-2);
  });
});

describe("subrequests", () => {
  it("an uncontended locked request costs exactly 2N node requests", async () => {
    const { locks } = testLocks();
    let spent: Budget | undefined;
    const app = new Hono();
    app.post(
      "/once",
      lock({ locks, key: () => "once", budget: () => (spent = budget.workersFetch()) }),
      (c) => c.text("ok"),
    );
    await resetStats();
    const { response, settled } = call(app, "/once");
    expect((await response).status).toBe(200);
    await settled;
    expect(await totalRequests()).toBe(2 * N);
    expect(spent?.spent).toBe(2 * N);
  });

  it("under contention, stops retrying before the subrequest allowance is spent", async () => {
    // The holder is another client: waiters of the holder's own manager queue locally and send
    // nothing, which is not what this test measures.
    const prefix = `t:${crypto.randomUUID()}:`;
    const { locks } = testLocks({ prefix });
    const holder = await testLocks({ prefix }).locks.acquire("busy", { lease: 10_000 });
    const allowance = 20;
    const wait = 8_000;
    let spent: Budget | undefined;
    const app = new Hono();
    app.post(
      "/busy",
      lock({
        locks,
        key: () => "busy",
        wait,
        budget: () => (spent = budget.workersFetch({ subrequests: allowance })),
      }),
      (c) => c.text("ran"),
    );
    try {
      await resetStats();
      const started = performance.now();
      const { response, settled } = call(app, "/busy");
      const res = await response;
      await settled;
      const elapsed = performance.now() - started;
      expect(res.status).toBe(409);
      const counted = await totalRequests();
      expect(counted).toBe(spent?.spent);
      expect(counted).toBeLessThanOrEqual(allowance);
      // Several attempts were made (a busy retry probes one node), and it gave up before `wait` ran out.
      expect(counted).toBeGreaterThanOrEqual(3 * N);
      expect(elapsed / wait).toBeLessThan(0.9);
    } finally {
      await holder.release();
    }
  });
});
