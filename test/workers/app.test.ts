/**
 * The example app's long-running route inside workerd, with leases short enough to watch: the
 * rebuild outlives its lease through auto-extension, excludes a second rebuild, and stops when its
 * lock is lost (`c.var.lock.signal`).
 */
import { describe, expect, it } from "vitest";
import { createApp, REPORT_KEY } from "../../functions/app";
import { call, sleep, testLocks } from "./support/cluster";

const reportLease = 500;
const reportMs = 1_500;

describe("POST /reports/daily/rebuild", () => {
  it("outlives its lease through auto-extension and excludes a second rebuild", async () => {
    const { locks, events } = testLocks();
    const app = createApp(() => locks, { reportLease, reportMs });
    const first = call(app, "/reports/daily/rebuild");
    await sleep(reportLease * 1.5);
    const second = call(app, "/reports/daily/rebuild");

    const busy = await second.response;
    expect(busy.status).toBe(409);
    const res = await first.response;
    await Promise.all([first.settled, second.settled]);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; durationMs: number };
    expect(body.status).toBe("rebuilt");
    expect(body.durationMs / reportLease).toBeGreaterThan(2);
    expect(
      events.filter((e) => e.type === "extend" && e.result === "extended").length,
    ).toBeGreaterThan(1);
    expect((await locks.inspect(REPORT_KEY)).held).toBe(false);
  });

  it("stops when its lock is lost, answering 503 instead of finishing", async () => {
    const { locks } = testLocks();
    const app = createApp(() => locks, { reportLease, reportMs });
    const started = performance.now();
    const rebuild = call(app, "/reports/daily/rebuild");
    await sleep(reportLease / 5);
    // An operator breaks the lock and someone else takes it: the next extension finds it gone.
    await locks.forceRelease(REPORT_KEY);
    const intruder = await locks.acquire(REPORT_KEY, { lease: 5_000 });
    try {
      const res = await rebuild.response;
      await rebuild.settled;
      const elapsed = performance.now() - started;
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ title: "Lock lost" });
      expect(elapsed / reportMs).toBeLessThan(0.75);
      // The intruder's lock was not touched by the stopped rebuild's release.
      await expect(intruder.extend()).resolves.toMatchObject({ validUntil: expect.any(Number) });
    } finally {
      await intruder.release();
    }
  });
});
