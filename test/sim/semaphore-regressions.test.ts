/**
 * What the semaphore's named schedules (`semaphore-regressions.ts`) show beyond "no bug, and the
 * mutant's bug" (which `sim.test.ts` checks for every regression): clients whose epoch clocks
 * are 10 s off are served only once a holder releases; a waiter is served a crashed holder's
 * slot at its expiry, before a `tryAcquire` looking then; the trim after a slow node frees the
 * other slot there while the permit is held, and clearing the permit's own slot there too (the
 * mutant `s-trim-deletes-kept-slot`) is invisible; the semaphore workload leaves a lock
 * schedule's lock callers as they were.
 */
import { describe, expect, it } from "vitest";
import { mutantRun } from "./mutants";
import { REGRESSIONS } from "./regressions";
import { runSchedule } from "./run";
import { EPOCH } from "./runtime/scheduler";
import { withSemaphores } from "./workload/spec";

/** The permits of a trace: when granted (ms after the epoch), by whom, released when. */
const permits = (trace: readonly string[] | undefined) =>
  (trace ?? [])
    .filter((l) => l.includes(" permit "))
    .map((l) => {
      const [at = "", , id = ""] = l.split(" ");
      const release = Number(l.match(/release=([\d.]+)/)?.[1] ?? Number.NaN);
      return { at: Number(at) - EPOCH, id, release: release - EPOCH };
    });

describe("semaphore regressions", () => {
  it("clients 10 s ahead and 10 s behind are granted only after the holders release", async () => {
    const { verdict, trace } = await runSchedule(REGRESSIONS["s-client-clock-ahead"].spec, {
      trace: true,
    });
    expect(verdict.bugs).toEqual([]);
    const [first, second, ...offClock] = permits(trace);
    expect(first?.id).toMatch(/^i0\//);
    expect(second?.id).toMatch(/^i0\//);
    expect(offClock.map((p) => p.id.split("/")[0]).sort()).toEqual(["i1", "i2"]);
    const released = Math.min(first?.release ?? 0, second?.release ?? 0);
    for (const p of offClock) expect(p.at).toBeGreaterThanOrEqual(released);
  });

  it("a waiter takes a crashed holder's slot at its expiry, before a tryAcquire 10 s behind", async () => {
    for (const name of ["s-expired-slot-waiter", "s-try-before-waiter"] as const) {
      const { verdict, trace } = await runSchedule(REGRESSIONS[name].spec, { trace: true });
      expect(verdict.bugs).toEqual([]);
      const [held, waiter, ...rest] = permits(trace);
      expect(held?.id).toMatch(/^i0\//);
      expect(waiter?.id).toMatch(/^i1\//);
      // The slot expires at 500 ms (lease 500, granted within a few ms): served within 10 ms.
      expect(waiter?.at).toBeGreaterThanOrEqual(500);
      expect(waiter?.at).toBeLessThan(510);
      expect(rest).toEqual([]);
    }
  });

  it("the trim frees the slow node's other slot while the permit is held", async () => {
    const lines: string[] = [];
    const spec = REGRESSIONS["s-trim-late-node"].spec;
    const { verdict, trace } = await runSchedule(spec, {
      trace: true,
      log: (line) => lines.push(line),
    });
    expect(verdict.bugs).toEqual([]);
    const held = permits(trace).find((p) => p.id.startsWith("i1/"));
    // The slow node placed the token on slot 1 (its slot 0 still held H's token), then the trim.
    const placed = lines.find((l) => / c1>n2 eval semaphore-acquire ran: \[1,1\]$/.test(l));
    const trim = lines.find((l) => / c1>n2 eval semaphore-discard ran: 1$/.test(l));
    expect(placed).toBeDefined();
    expect(Number(trim?.split(" ")[0]) - EPOCH).toBeLessThan(held?.release ?? 0);
  });

  it("a trim that also clears the permit's slot is invisible: no node it reaches counts", async () => {
    const spec = REGRESSIONS["s-trim-late-node"].spec;
    const { verdict } = await runSchedule(spec, mutantRun("s-trim-deletes-kept-slot"));
    expect(verdict.bugs).toEqual([]);
  });

  it.each(["c-handover-starvation", "a-failed-extend", "b-fence-raise"] as const)(
    "the semaphore workload leaves the lock callers of %s as they were",
    async (name) => {
      const lockOnly = REGRESSIONS[name].spec;
      const workload = { instances: REGRESSIONS["s-client-clock-ahead"].spec.instances };
      // One at a time: runs share the pool of client realms.
      const alone = await runSchedule(lockOnly, { trace: true });
      const mixed = await runSchedule(withSemaphores(lockOnly, workload), { trace: true });
      const grants = (trace: readonly string[] | undefined) =>
        (trace ?? []).filter((l) => l.includes(" grant "));
      expect(mixed.verdict.bugs).toEqual([]);
      expect(mixed.verdict.permits).toBeGreaterThan(0);
      expect(grants(alone.trace).length).toBeGreaterThan(0);
      expect(grants(mixed.trace)).toEqual(grants(alone.trace));
    },
  );
});
