/**
 * Lambda `withLimit` (docs/design/semaphore.md §4 "Adapters") against a real 3-node dev cluster:
 * a burst of 3P invocations never has more than P handlers running (counted from the handlers' own
 * start and end), the others throw `SemaphoreBusyError` or answer `onBusy`; `wait` lets them all
 * through; the permit's TTL comes from the context; the settled release is awaited before the
 * wrapper returns; `withIdempotency` never keeps a busy answer; a quorum down is thrown; bad
 * options are refused at wrap time. Imported from its source file: not in `edgelock/lambda` yet.
 */
import { afterEach, describe, expect, it } from "vitest";
import { withIdempotency } from "../../src/adapters/lambda/index";
import { type WithLimitOptions, withLimit } from "../../src/adapters/lambda/with-limit";
import { isConfigurationError, isSemaphoreBusyError } from "../../src/errors/index";
import { createLocks, type Locks } from "../../src/index";
import { type Permit, semaphore } from "../../src/semaphore/index";
import { landed, pttlBack, readBack, resetCluster, sleep, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";
import { fakeContext, httpEventV2 } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });
afterEach(() => resetCluster(dev.cluster));

const make = (prefix: string): Locks =>
  createLocks({
    ...{ nodes: dev.cluster.nodes, prefix, lease: 5_000, retryDelayMax: 100 },
    // Generous for a loaded machine: these tests count holders, not latency.
    requestTimeout: 1_500,
  });

/** A handler holding `holdMs`, counting the invocations that overlap. */
function probe(holdMs: number) {
  const seen = { active: 0, most: 0, ran: 0 };
  const handler = async (_event: unknown, _context: unknown, permit: Permit) => {
    seen.active++;
    seen.ran++;
    seen.most = Math.max(seen.most, seen.active);
    await sleep(holdMs);
    seen.active--;
    return { statusCode: 200, slot: permit.slot };
  };
  return { handler, seen };
}

const settle = (call: Promise<unknown>) =>
  call.then(
    (value) => ({ value, error: undefined }),
    (error: unknown) => ({ value: undefined, error }),
  );

describe("withLimit: at most `permits` at once", () => {
  it("a burst of 3P without onBusy: never more than P run, the others throw SemaphoreBusyError", async () => {
    const P = 3;
    const locks = make(uniquePrefix("wl-burst"));
    const { handler, seen } = probe(300);
    const limited = withLimit(handler, { locks, key: "api", permits: P });
    const runs = await Promise.all(
      Array.from({ length: 3 * P }, () => settle(limited({}, fakeContext(10_000)))),
    );
    expect(seen.most).toBeLessThanOrEqual(P);
    expect(seen.ran).toBeGreaterThanOrEqual(1);
    expect(runs.filter((r) => r.error === undefined).length).toBe(seen.ran);
    for (const { error } of runs.filter((r) => r.error !== undefined)) {
      expect(isSemaphoreBusyError(error)).toBe(true);
      expect(error).toMatchObject({ key: "api", permits: P });
    }
    expect(await semaphore(locks, "api", { permits: P }).inspect()).toMatchObject({ held: 0 });
  });

  it("onBusy answers instead, with the SemaphoreBusyError", async () => {
    const P = 2;
    const locks = make(uniquePrefix("wl-onbusy"));
    const { handler, seen } = probe(300);
    const told: unknown[] = [];
    const limited = withLimit(handler, {
      locks,
      key: () => "api",
      permits: P,
      onBusy: (_event, _context, error) => {
        told.push(error);
        return { statusCode: 429, slot: -1 };
      },
    });
    const results = await Promise.all(
      Array.from({ length: 3 * P }, () => limited({}, fakeContext(10_000))),
    );
    expect(seen.most).toBeLessThanOrEqual(P);
    const busy = results.filter((r) => r.statusCode === 429);
    expect(busy.length).toBe(3 * P - seen.ran);
    expect(busy.length).toBeGreaterThanOrEqual(P);
    expect(told).toHaveLength(busy.length);
    for (const error of told)
      expect(error).toMatchObject({ name: "SemaphoreBusyError", permits: P });
  });

  it("with wait, a burst of 3P all runs, at most P at once", async () => {
    const P = 3;
    const locks = make(uniquePrefix("wl-wait"));
    const { handler, seen } = probe(150);
    const limited = withLimit(handler, { locks, key: "api", permits: P, wait: 10_000 });
    const results = await Promise.all(
      Array.from({ length: 3 * P }, () => limited({}, fakeContext(20_000))),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(3 * P).fill(200));
    expect(seen.ran).toBe(3 * P);
    expect(seen.most).toBeLessThanOrEqual(P);
    expect(seen.most).toBeGreaterThanOrEqual(2);
  });
});

describe("withLimit: the permit's life", () => {
  it("TTL = min(lease, remaining + margin) on every node, and the slot is free when it returns", async () => {
    const prefix = uniquePrefix("wl-ttl");
    const locks = make(prefix);
    const context = fakeContext(2_000);
    let slotKey = "";
    const limited = withLimit(
      async (_event: unknown, _context, permit) => {
        await landed(dev.cluster, N);
        slotKey = `${prefix}${permit.keys[0]}`;
        const values = await readBack(dev, N, slotKey);
        return { pttls: await pttlBack(dev, N, slotKey), values, token: permit.token };
      },
      { locks, key: "api", permits: 2, lease: 10_000, margin: 500 },
    );
    const result = await limited({}, context);
    expect(result.values).toEqual([result.token, result.token, result.token]);
    for (const pttl of result.pttls) {
      expect(pttl).toBeLessThanOrEqual(2_500);
      expect(pttl).toBeGreaterThan(1_500);
    }
    // The settled release: every node answered before the wrapper resolved.
    expect(await readBack(dev, N, slotKey)).toEqual([null, null, null]);
  });

  it("a throwing handler: its error rethrown unchanged, the slot free on every node", async () => {
    const prefix = uniquePrefix("wl-throw");
    const locks = make(prefix);
    const boom = new TypeError("boom");
    let slotKey = "";
    const limited = withLimit(
      async (_event: unknown, _context, permit) => {
        slotKey = `${prefix}${permit.keys[0]}`;
        // The release's request on one node answers late: it is awaited all the same.
        dev.cluster.controls[2]?.inject({ kind: "latency", ms: 300, count: 1 });
        throw boom;
      },
      { locks, key: "api", permits: 1 },
    );
    expect(await limited({}, fakeContext(5_000)).catch((e: unknown) => e)).toBe(boom);
    expect(await readBack(dev, N, slotKey)).toEqual([null, null, null]);
  });

  it("a majority of nodes failing: the QuorumError is thrown, the handler not called", async () => {
    const locks = make(uniquePrefix("wl-down"));
    let ran = false;
    const limited = withLimit(
      async () => {
        ran = true;
      },
      { locks, key: "api", permits: 2, onBusy: () => undefined },
    );
    for (const i of [0, 1]) dev.cluster.controls[i]?.inject({ kind: "status", status: 503 });
    const error = await limited({}, fakeContext(5_000)).catch((e: unknown) => e);
    expect((error as Error).name).toBe("QuorumError");
    expect(ran).toBe(false);
  });

  it("withIdempotency never keeps an onBusy answer, even a 200", async () => {
    const locks = make(uniquePrefix("wl-idem"));
    let ran = 0;
    const limited = withLimit(
      async () => {
        ran++;
        return { statusCode: 201, body: "charged" };
      },
      { locks, key: "api", permits: 1, onBusy: () => ({ statusCode: 200, body: "later" }) },
    );
    const handler = withIdempotency(async (event, context) => limited(event, context as never), {
      locks,
    });
    const key = crypto.randomUUID();
    const event = () =>
      httpEventV2("POST", "/charge", { body: {}, headers: { "idempotency-key": key } });
    const holder = await semaphore(locks, "api", { permits: 1 }).acquire();
    const busy = await handler(event(), fakeContext(10_000));
    expect(busy).toMatchObject({ statusCode: 200, body: "later" });
    await holder.release({ settled: true });
    const retry = await handler(event(), fakeContext(10_000));
    expect(retry).toMatchObject({ statusCode: 201, body: "charged" });
    expect(ran).toBe(1);
  });
});

describe("withLimit: options", () => {
  const locks = createLocks({ nodes: [{ url: "http://127.0.0.1:9", token: "unused" }] });
  const work = async () => "ok";
  const ok = { locks, key: "k", permits: 2 };
  it.each([
    ["handler", () => withLimit("nope" as never, ok)],
    ["options", () => withLimit(work, null as never)],
    ["locks", () => withLimit(work, { ...ok, locks: {} as never })],
    ["key", () => withLimit(work, { ...ok, key: "" })],
    ["key", () => withLimit(work, { ...ok, key: 5 as never })],
    ["key", () => withLimit(work, { ...ok, key: "k:permit:1" })],
    ["permits", () => withLimit(work, { locks, key: "k" } as never)],
    ["permits", () => withLimit(work, { ...ok, permits: 65 })],
    ["permits", () => withLimit(work, { ...ok, locks: () => locks, permits: 0 })],
    ["lease", () => withLimit(work, { ...ok, lease: 0 })],
    ["wait", () => withLimit(work, { ...ok, wait: -1 })],
    ["margin", () => withLimit(work, { ...ok, margin: Number.NaN })],
    ["onBusy", () => withLimit(work, { ...ok, onBusy: 429 as never })],
    ["permit", () => withLimit(work, { ...ok, permit: 2 } as WithLimitOptions<unknown, string>)],
  ])("rejects a bad `%s` when wrapping", (option, wrap) => {
    let named: string | undefined;
    try {
      wrap();
    } catch (error) {
      if (!isConfigurationError(error)) throw error;
      named = error.option;
    }
    expect(named).toBe(option);
  });

  it.each([
    [{ key: 5 }, "invalid option `key`: expected a string or a function, got number"],
    [{ key: null }, "invalid option `key`: expected a string or a function, got null"],
    [
      { key: ["a", "b"] },
      "invalid option `key`: expected a string or a function, got an array (a semaphore has one name)",
    ],
    [{ permits: "3" }, 'invalid option `permits`: expected an integer from 1 to 64, got "3"'],
    [{ lease: "5s" }, 'invalid option `lease`: expected an integer >= 1 (ms), got "5s"'],
  ])("says what it got: %o", (bad, message) => {
    expect(() => withLimit(work, { ...ok, ...bad } as never)).toThrow(message);
  });

  it("a key(event) that is not a string fails the invocation with a ConfigurationError", async () => {
    const limited = withLimit(work, {
      locks: () => locks,
      key: () => undefined as never,
      permits: 1,
    });
    const error = await limited({}, fakeContext(5_000)).catch((e: unknown) => e);
    expect(isConfigurationError(error) && error.option).toBe("key");
  });
});
