/**
 * C13, the semaphore adapters' promise (docs/design/semaphore.md §4 "Adapters", docs/SAFETY.md
 * §4c Theorem 5, §6b I4): at most `permits` jobs run at once through `limit()` / `withLimit`, and
 * an idempotency layer never keeps the answer of a limit layer inside it that found every permit
 * held (a 429, or whatever the app's `onBusy` answers).
 *
 * @module
 */
import { expect } from "vitest";
import { type Permit, semaphore } from "../../src/semaphore/index";
import type { Case } from "./cases";

const NOT_A_LIMIT =
  "not a limit: one run at a time is the lock's own promise (C1, Theorem 1), no permits to count";
const NO_LIMIT_LAYER =
  "not a limit, and no HTTP answer a limit layer inside could give an idempotency layer";

/** Permits of the burst: 3P invocations at once. */
const P = 2;
/** How long each job of the burst holds its permit, ms: long enough for the burst to overlap. */
const HOLD_MS = 200;

export const C13: Case = {
  id: "C13",
  promise:
    "at most `permits` jobs run at once (a burst of 3P, overlap counted from the jobs' own start and end); a limit layer's busy answer (429, or the app's onBusy 200) is never kept by an idempotency layer around it",
  notFor: {
    "hono lock()": NOT_A_LIMIT,
    "lambda withLock": NOT_A_LIMIT,
    "lambda dedupeScheduled": NO_LIMIT_LAYER,
    "workers dedupeScheduled": NO_LIMIT_LAYER,
    "once()": NO_LIMIT_LAYER,
  },
  async run(surface, cluster) {
    if (surface.overLock !== undefined) {
      for (const status of [429, 200]) {
        const { locks } = cluster.locks();
        const key = `inner:${crypto.randomUUID()}`;
        const layer = { key, status, locks: () => locks, layer: "limit" as const };
        const instance = surface.overLock({ locks }, layer);
        const holder: Permit = await semaphore(locks, key, { permits: 1 }).acquire();
        const busy = await instance.invoke(async () => ({ status: 201 }));
        expect(busy).toEqual({ ran: false, outcome: status, replayed: false });
        await holder.release({ settled: true });
        const retry = await instance.invoke(async () => ({ status: 201 }));
        expect(retry).toEqual({ ran: true, outcome: 201, replayed: false });
      }
      return;
    }
    const { locks } = cluster.locks();
    const instance = surface.build({ locks, extra: { permits: P } });
    const seen = { active: 0, most: 0, ran: 0 };
    const job = async () => {
      seen.active++;
      seen.ran++;
      seen.most = Math.max(seen.most, seen.active);
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      seen.active--;
      return { status: 201 };
    };
    const results = await Promise.all(Array.from({ length: 3 * P }, () => instance.invoke(job)));
    expect(seen.most).toBeLessThanOrEqual(P);
    expect(seen.ran).toBeGreaterThanOrEqual(1);
    expect(results.filter((r) => r.outcome === 201).length).toBe(seen.ran);
    // The others were told "at capacity": a 429 (Hono), a thrown SemaphoreBusyError (Lambda).
    for (const r of results) expect([201, 429, "threw"]).toContain(r.outcome);
  },
};
