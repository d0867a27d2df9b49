/**
 * "Waiting never eats into `reserve`" (README, Execution budget), on every way of waiting: a
 * caller of another `Locks` (the nodes' queues: every Lambda invocation, every Worker isolate), a
 * caller of the same `Locks` (the local line), an Idempotency-Key duplicate waiting for the first
 * answer, and a permit's wait. The queue, the permit's wait and the duplicate's used to run to
 * `wait` and notice the budget only at their next look, up to `retryDelayMax` later. Timing as a
 * ratio in one run: a wait of 10 s under a budget that leaves 600 ms before its reserve against a
 * plain `wait: 600` (a lock's or permit's stops one request timeout earlier still, so that with
 * `reserve` 0 a Lambda wrapper answers before its deadline: the last two cases).
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { idempotency } from "../../src/adapters/hono/index";
import { withLimit, withLock } from "../../src/adapters/lambda/index";
import {
  type Budget,
  budget,
  createLocks,
  isLockBusyError,
  isSemaphoreBusyError,
  type Locks,
  semaphore,
} from "../../src/index";
import { fakeContext } from "../lambda/helpers";
import { useDevCluster } from "../support/dev-cluster";
import { readBack, resetCluster, sleep, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 3 });
const LEFT = 600; // what the budget leaves before its reserve

function managers(name: string) {
  resetCluster(dev.cluster);
  const prefix = uniquePrefix(name);
  // A round must fit in what the budget leaves (requestTimeout + minValidity < LEFT); a refresh
  // every 2 s is what the waits ran to before.
  const make = () =>
    createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 300, retryDelayMax: 2_000 });
  return { prefix, holder: make(), other: make() };
}

/** How long `attempt` takes to fail, and its error. */
async function timed(attempt: () => Promise<unknown>): Promise<[number, unknown]> {
  const start = performance.now();
  const error = await attempt().then(
    () => undefined,
    (e: unknown) => e,
  );
  return [performance.now() - start, error];
}

/** A 10 s wait under a budget with `LEFT` ms before its reserve, and a plain `wait: LEFT`. */
async function bothWays(
  waiter: (options: { wait: number; budget?: Budget }) => Promise<unknown>,
): Promise<{ ratio: number; errors: unknown[] }> {
  const [budgeted, first] = await timed(() =>
    waiter({ wait: 10_000, budget: budget.within(LEFT + 800, { reserve: 800 }) }),
  );
  const [plain, second] = await timed(() => waiter({ wait: LEFT }));
  return { ratio: budgeted / plain, errors: [first, second] };
}

describe("a wait stops where the budget keeps only its reserve", () => {
  it.each([
    ["another Locks (the nodes' queues)", (m: { holder: Locks; other: Locks }) => m.other],
    ["the same Locks (the local line)", (m: { holder: Locks; other: Locks }) => m.holder],
  ])("a lock waiter of %s", async (_, waiterOf) => {
    const m = managers("wait-reserve");
    const held = await m.holder.acquire("k", { lease: 30_000 });
    const locks = waiterOf(m);
    const { ratio, errors } = await bothWays((options) => locks.acquire("k", options));
    expect(errors.every(isLockBusyError), String(errors)).toBe(true);
    expect(ratio).toBeLessThan(1.5); // it ran to the next refresh: 3.4× (2,000 ms against 600)
    // Nothing of the waiters stayed: the holder's token alone, on every node.
    expect(await readBack(dev, 3, `${m.prefix}k`)).toEqual(Array(3).fill(held.token));
    await held.release();
  });

  it("an Idempotency-Key duplicate waiting for the first answer (Hono idempotency())", async () => {
    const m = managers("wait-reserve-idem");
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const appWith = (options: { wait: number; budget?: () => Budget }) => {
      const app = new Hono();
      app.post("/pay", idempotency({ locks: m.other, ...options }), async (c) => {
        await gate;
        return c.json({ ok: true });
      });
      return app;
    };
    const post = (app: Hono) =>
      app.request("/pay", {
        method: "POST",
        headers: { "Idempotency-Key": "k1", "content-type": "application/json" },
        body: "{}",
      });
    const budgeted = appWith({
      wait: 10_000,
      budget: () => budget.within(LEFT + 800, { reserve: 800 }),
    });
    const first = post(budgeted);
    try {
      await sleep(100);
      const { ratio, errors } = await bothWays(async ({ wait, budget: b }) => {
        const app = b === undefined ? appWith({ wait }) : budgeted;
        const res = await post(app);
        throw res.status; // the 409 the duplicate gets once its wait is over
      });
      expect(errors).toEqual([409, 409]);
      expect(ratio).toBeLessThan(1.5);
    } finally {
      release();
    }
    expect((await first).status).toBe(200);
  });

  // With `reserve` 0 the wait used to end at the deadline itself, and the answer came after a
  // real Lambda had timed out.
  it.each([
    [
      "withLock",
      (locks: Locks) =>
        withLock(async () => "ran", { locks, key: () => "k", wait: 10_000, onBusy: () => "busy" }),
    ],
    [
      "withLimit",
      (locks: Locks) =>
        withLimit(async () => "ran", {
          locks,
          key: "s",
          permits: 1,
          wait: 10_000,
          onBusy: () => "busy",
        }),
    ],
  ])("%s with reserve 0 answers onBusy before the invocation's deadline", async (_, wrap) => {
    const m = managers("wait-deadline");
    const lock = await m.holder.acquire("k", { lease: 30_000 });
    const permit = await semaphore(m.holder, "s", { permits: 1 }).acquire({ lease: 30_000 });
    const context = fakeContext(1_000);
    expect(await wrap(m.other)({}, context)).toBe("busy");
    expect(performance.now() - context.startedAt).toBeLessThan(
      context.deadline - context.startedAt,
    );
    await lock.release();
    await permit.release();
  });

  it("a permit's waiter", async () => {
    const m = managers("wait-reserve-permit");
    const held = await semaphore(m.holder, "s", { permits: 1 }).acquire({ lease: 30_000 });
    const sem = semaphore(m.other, "s", { permits: 1 });
    const { ratio, errors } = await bothWays((options) => sem.acquire(options));
    expect(errors.every(isSemaphoreBusyError), String(errors)).toBe(true);
    expect(ratio).toBeLessThan(1.5);
    expect(await sem.inspect()).toMatchObject({ held: 1 });
    await held.release();
  });
});
