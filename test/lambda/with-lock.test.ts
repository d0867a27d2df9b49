import { afterEach, describe, expect, it, vi } from "vitest";
import { withLock } from "../../src/adapters/lambda/index";
import { isBudgetExhaustedError, isLockBusyError, type LockBusyError } from "../../src/errors";
import { createLocks, type LockEvent, type LocksOptions } from "../../src/index";
import {
  eventually,
  landed,
  pttlBack,
  quietThenReset,
  readBack,
  resetCluster,
  sleep,
  uniquePrefix,
} from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";
import { aborted, fakeContext, gate } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });

/** A manager on the test cluster with a fresh prefix, recording every lock event with its time. */
function setup(name: string, options: Partial<LocksOptions> = {}) {
  const prefix = uniquePrefix(`lambda-${name}`);
  const events: { at: number; event: LockEvent }[] = [];
  const locks = createLocks({
    nodes: dev.cluster.nodes,
    prefix,
    onEvent: (event) => events.push({ at: performance.now(), event }),
    ...options,
  });
  const released = () => events.filter((e) => e.event.type === "release");
  return { prefix, locks, events, released };
}

/** Keys of `prefix + key` gone (or not) on every node, read directly from redis-server. */
const gone = async (full: string) => (await readBack(dev, N, full)).every((v) => v === null);

afterEach(() => resetCluster(dev.cluster));

describe("withLock: TTL from the Lambda context", () => {
  it.each([
    { name: "time-bound", remaining: 3_000, lease: 10_000, margin: 500 },
    { name: "lease-bound", remaining: 8_000, lease: 2_000, margin: 1_000 },
  ])("$name: PTTL on every node = min(lease, remaining + margin)", async (c) => {
    const { prefix, locks } = setup(c.name);
    await quietThenReset(dev.cluster);
    const context = fakeContext(c.remaining);
    const expected = Math.min(c.lease, c.remaining + c.margin);
    const handler = withLock(
      async (event: { id: string }, _context, lock) => {
        // Decided at a majority: let the third node's grant land before reading it.
        await landed(dev.cluster, N);
        const direct = await pttlBack(dev, N, `${prefix}job:${event.id}`);
        const inspected = await locks.inspect(lock.key);
        // Everything between the invocation start and these reads may have eaten into the TTL.
        const elapsed = performance.now() - context.startedAt;
        return { direct, inspected, elapsed, held: inspected.held };
      },
      { locks, key: (event) => `job:${event.id}`, lease: c.lease, margin: c.margin },
    );
    const result = await handler({ id: "1" }, context);
    expect(result.held).toBe(true);
    const pttls = [...result.direct, ...result.inspected.nodes.map((o) => o.pttl ?? -2)];
    for (const pttl of pttls) {
      // 3 ms: whole-ms rounding of the context, the TTL floor and Redis' PTTL.
      expect(pttl).toBeGreaterThanOrEqual(expected - result.elapsed - 3);
      expect(pttl).toBeLessThanOrEqual(expected);
    }
    expect(await gone(`${prefix}job:1`)).toBe(true);
  });

  it("lock.signal aborts before the function's deadline", async () => {
    const { locks } = setup("deadline");
    const context = fakeContext(1_200);
    const handler = withLock(
      async (_event: unknown, ctx, lock) => {
        const at = await aborted(lock.signal);
        return { at, left: ctx.getRemainingTimeInMillis(), reason: lock.signal.reason as Error };
      },
      { locks, key: () => "deadline", lease: 10_000 },
    );
    const { at, left, reason } = await handler({}, context);
    expect(reason.name).toBe("LockLostError");
    expect(at).toBeLessThan(context.deadline);
    expect(left).toBeGreaterThan(0);
  });

  it("lock.signal aborts when the lock is lost (and auto-extension kept it before that)", async () => {
    const { locks } = setup("lost");
    const context = fakeContext(10_000);
    const lease = 400;
    const handler = withLock(
      async (_event: unknown, _ctx, lock) => {
        const start = performance.now();
        // Held for 3 leases: only auto-extension can keep it alive that long.
        await sleep(3 * lease);
        const stillHeld = !lock.signal.aborted && (await locks.inspect(lock.key)).held;
        const heldFor = performance.now() - start;
        await locks.forceRelease(lock.key); // an operator takes it away
        const at = await aborted(lock.signal);
        return { stillHeld, heldFor, at, reason: lock.signal.reason as Error };
      },
      { locks, key: () => "lost", lease },
    );
    const result = await handler({}, context);
    expect(result.stillHeld).toBe(true);
    expect(result.heldFor).toBeGreaterThan(2 * lease);
    expect(result.reason.name).toBe("LockLostError");
    expect(result.reason.message).toContain("expired or taken over");
    expect(result.at).toBeLessThan(context.deadline);
  });
});

describe("withLock: release", () => {
  it("is awaited before the wrapper resolves, even when the release is slow", async () => {
    // A request timeout well above the injected latency: the release must succeed, only late.
    const { prefix, locks, released } = setup("slow-release", { requestTimeout: 2_000 });
    let returnedAt = 0;
    const handler = withLock(
      async (_event: unknown, _ctx, lock) => {
        expect(await readBack(dev, N, `${prefix}k`)).toEqual([lock.token, lock.token, lock.token]);
        // The next request on every node, the release, answers 200 ms late.
        for (const node of dev.cluster.controls)
          node.inject({ kind: "latency", ms: 200, count: 1 });
        returnedAt = performance.now();
        return "ok";
      },
      { locks, key: () => "k" },
    );
    const result = await handler({}, fakeContext(5_000));
    const resolvedAt = performance.now();
    expect(result).toBe("ok");
    expect(await gone(`${prefix}k`)).toBe(true);
    const [release] = released();
    expect(release?.event).toMatchObject({ type: "release", result: "released" });
    expect(release?.at).toBeGreaterThan(returnedAt);
    expect(release?.at).toBeLessThanOrEqual(resolvedAt);
    // The wrapper waited for the delayed release instead of returning right after the handler.
    expect(resolvedAt - returnedAt).toBeGreaterThan(200);
  });

  it("a throwing handler still releases, and its error is rethrown unchanged", async () => {
    const { prefix, locks, released } = setup("throw", { requestTimeout: 2_000 });
    const boom = new TypeError("boom");
    let calls = 0;
    const handler = withLock(
      async (_event: unknown, _ctx, lock) => {
        calls++;
        expect((await readBack(dev, N, `${prefix}k`))[0]).toBe(lock.token);
        for (const node of dev.cluster.controls)
          node.inject({ kind: "latency", ms: 150, count: 1 });
        throw boom;
      },
      { locks, key: () => "k" },
    );
    const error = await handler({}, fakeContext(5_000)).catch((e: unknown) => e);
    const rejectedAt = performance.now();
    expect(error).toBe(boom);
    expect(calls).toBe(1);
    // The release resolves at a majority; a slower node's delete may land a moment later.
    await vi.waitFor(async () => expect(await gone(`${prefix}k`)).toBe(true));
    const [release] = released();
    expect(release?.event).toMatchObject({ type: "release", result: "released" });
    expect(release?.at).toBeLessThanOrEqual(rejectedAt);
  });

  it("a handler that outlives a short lease still ends with every key gone", async () => {
    const { prefix, locks } = setup("long-run");
    const handler = withLock(async () => sleep(700).then(() => "done"), {
      locks,
      key: () => "k",
      lease: 300,
    });
    expect(await handler({}, fakeContext(5_000))).toBe("done");
    expect(await gone(`${prefix}k`)).toBe(true);
  });
});

describe("withLock: concurrent invocations for one key", () => {
  const CONCURRENCY = 5;

  it("exactly one runs; the others throw LockBusyError (async invocations get retried)", async () => {
    const { prefix, locks } = setup("busy-throw");
    const hold = gate();
    let running = 0;
    const handler = withLock(
      async () => {
        running++;
        await hold.promise;
        return "ran";
      },
      { locks, key: () => "order:7", lease: 5_000 },
    );
    let settled = 0;
    const runs = Array.from({ length: CONCURRENCY }, () =>
      handler({}, fakeContext(10_000)).then(
        (value) => ({ value, error: undefined }),
        (error: unknown) => ({ value: undefined, error }),
      ),
    );
    for (const run of runs) void run.then(() => settled++);
    // Every loser fails fast (wait 0) while the winner is still inside its lock.
    await eventually(() => settled === CONCURRENCY - 1);
    hold.open();
    const results = await Promise.all(runs);
    expect(running).toBe(1);
    expect(results.flatMap((r) => (r.value === undefined ? [] : [r.value]))).toEqual(["ran"]);
    const errors = results.flatMap((r) => (r.error === undefined ? [] : [r.error]));
    expect(errors).toHaveLength(CONCURRENCY - 1);
    for (const error of errors) {
      expect(isLockBusyError(error)).toBe(true);
      expect((error as LockBusyError).retryAfter).toBeGreaterThan(0);
      expect((error as LockBusyError).retryAfter).toBeLessThanOrEqual(5_000);
    }
    expect(await gone(`${prefix}order:7`)).toBe(true);
  });

  it("with onBusy, the others return its value (an API Gateway 409 with Retry-After)", async () => {
    const { locks } = setup("busy-value");
    const hold = gate();
    let running = 0;
    const busyCalls: { event: { id: string }; requestId: string }[] = [];
    type Result = { statusCode: number; headers?: Record<string, string>; body: string };
    const handler = withLock(
      async (event: { id: string }): Promise<Result> => {
        running++;
        await hold.promise;
        return { statusCode: 200, body: event.id };
      },
      {
        locks,
        key: (event) => `order:${event.id}`,
        lease: 4_000,
        onBusy: (event, context, error) => {
          busyCalls.push({ event, requestId: context.awsRequestId });
          return {
            statusCode: 409,
            headers: { "retry-after": String(Math.ceil(error.retryAfter / 1000)) },
            body: `order ${event.id} is being processed`,
          };
        },
      },
    );
    const contexts = Array.from({ length: CONCURRENCY }, (_, i) => fakeContext(10_000, `req-${i}`));
    let settled = 0;
    const runs = contexts.map((context) => handler({ id: "9" }, context).finally(() => settled++));
    await eventually(() => settled === CONCURRENCY - 1);
    hold.open();
    const results = await Promise.all(runs);
    expect(running).toBe(1);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.statusCode === 409)) {
      const seconds = Number(r.headers?.["retry-after"]);
      expect(seconds).toBeGreaterThanOrEqual(1);
      expect(seconds).toBeLessThanOrEqual(4);
    }
    expect(busyCalls).toHaveLength(CONCURRENCY - 1);
    expect(busyCalls.every((c) => c.event.id === "9" && c.requestId.startsWith("req-"))).toBe(true);
  });

  it("with wait, a second invocation runs after the first released; the runs never overlap", async () => {
    const { locks } = setup("wait");
    const intervals: [number, number][] = [];
    const handler = withLock(
      async () => {
        const start = performance.now();
        await sleep(150);
        intervals.push([start, performance.now()]);
      },
      { locks, key: () => "k", wait: 5_000 },
    );
    await Promise.all([handler({}, fakeContext(10_000)), handler({}, fakeContext(10_000))]);
    expect(intervals).toHaveLength(2);
    intervals.sort((a, b) => a[0] - b[0]);
    expect(intervals[1]?.[0]).toBeGreaterThanOrEqual(intervals[0]?.[1] as number);
  });
});

describe("withLock: budget and inputs", () => {
  it("less time left than `reserve`: BudgetExhaustedError, no node called, handler not run", async () => {
    const { locks } = setup("reserve");
    await quietThenReset(dev.cluster);
    let calls = 0;
    const handler = withLock(
      async () => {
        calls++;
      },
      { locks, key: () => "k", reserve: 2_000 },
    );
    const error = await handler({}, fakeContext(1_500)).catch((e: unknown) => e);
    expect(isBudgetExhaustedError(error)).toBe(true);
    expect(calls).toBe(0);
    expect(dev.cluster.controls.map((c) => c.stats().requests)).toEqual([0, 0, 0]);
  });

  it("a key of several keys locks them all; the opposite transfer is busy; all gone after", async () => {
    const { prefix, locks } = setup("multi");
    const hold = gate();
    const handler = withLock(
      async (_event: { from: string; to: string }, _context, lock) => {
        await hold.promise;
        return lock.keys;
      },
      { locks, key: (event) => [`account:${event.from}`, `account:${event.to}`], lease: 5_000 },
    );
    const first = handler({ from: "2", to: "1" }, fakeContext(10_000));
    await eventually(async () =>
      (await readBack(dev, N, `${prefix}account:2`)).every((v) => v !== null),
    );
    expect((await readBack(dev, N, `${prefix}account:1`)).every((v) => v !== null)).toBe(true);
    const opposite = (await handler({ from: "1", to: "2" }, fakeContext(10_000)).catch(
      (e) => e,
    )) as LockBusyError;
    expect(isLockBusyError(opposite)).toBe(true);
    expect(opposite.message).toContain('"account:1, account:2"');
    hold.open();
    expect(await first).toEqual(["account:1", "account:2"]);
    expect(await gone(`${prefix}account:1`)).toBe(true);
    expect(await gone(`${prefix}account:2`)).toBe(true);
  });

  it("errors of `key` propagate unchanged and nothing is locked", async () => {
    const { locks } = setup("key-error");
    await quietThenReset(dev.cluster);
    const bad = new Error("no invoice id");
    const handler = withLock(async () => "never", {
      locks,
      key: () => {
        throw bad;
      },
    });
    await expect(handler({}, fakeContext(5_000))).rejects.toBe(bad);
    expect(dev.cluster.controls.map((c) => c.stats().requests)).toEqual([0, 0, 0]);
  });

  it("`locks` as a function: called per invocation with (event, context)", async () => {
    const { locks } = setup("lazy");
    const seen: string[] = [];
    const handler = withLock(async (event: { n: number }) => event.n * 2, {
      locks: (_event, context) => {
        seen.push(context.awsRequestId);
        return locks;
      },
      key: (event) => `n:${event.n}`,
    });
    expect(await handler({ n: 21 }, fakeContext(5_000, "a"))).toBe(42);
    expect(await handler({ n: 4 }, fakeContext(5_000, "b"))).toBe(8);
    expect(seen).toEqual(["a", "b"]);
  });
});
