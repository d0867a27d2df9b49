import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { isConfigurationError, isLockBusyError } from "../../src/errors";
import {
  eventually,
  pttlBack,
  quietThenReset,
  readBack,
  resetCluster,
  uniquePrefix,
} from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";
import { fakeContext, httpEventV2 } from "./helpers";

// The entry points read process.env on first use; the module is imported after it is set.
type LambdaModule = typeof import("../../functions/lambda");

const N = 3;
const dev = useDevCluster({ nodes: N });
const prefix = uniquePrefix("functions-lambda");
const ENV_KEYS = [
  "EDGELOCK_NODES",
  "UPSTASH_REDIS_REST_URL",
  "UPSTASH_REDIS_REST_TOKEN",
  "LOCK_PREFIX",
] as const;
const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
let fn: LambdaModule;

beforeAll(async () => {
  process.env.EDGELOCK_NODES = JSON.stringify(dev.cluster.nodes);
  process.env.LOCK_PREFIX = prefix;
  fn = await import("../../functions/lambda");
});

afterAll(() => {
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
});

afterEach(() => resetCluster(dev.cluster));

const gone = async (key: string) =>
  (await readBack(dev, N, `${prefix}${key}`)).every((v) => v === null);

/** PTTL of `key` on every node once it appears, with the time elapsed since `startedAt`. */
async function pttlWhileHeld(key: string, startedAt: number) {
  // On every node: a grant is decided at a majority, the third node's may land a little later.
  await eventually(
    async () => (await readBack(dev, N, `${prefix}${key}`)).every((v) => v !== null),
    5_000,
  );
  const pttls = await pttlBack(dev, N, `${prefix}${key}`);
  return { pttls, elapsed: performance.now() - startedAt };
}

/** expected − elapsed − 3 ms (whole-ms rounding) ≤ PTTL ≤ expected, on every node. */
function expectTtl(result: { pttls: number[]; elapsed: number }, expected: number) {
  expect(result.pttls).toHaveLength(N);
  for (const pttl of result.pttls) {
    expect(pttl).toBeGreaterThanOrEqual(expected - result.elapsed - 3);
    expect(pttl).toBeLessThanOrEqual(expected);
  }
}

const json = (body: string) => JSON.parse(body) as Record<string, unknown>;

describe("functions/lambda.handler: the Hono app through hono/aws-lambda", () => {
  it("charges an invoice: lease-bound TTL, released before the invocation returns", async () => {
    const context = fakeContext(20_000);
    const pending = fn.handler(httpEventV2("POST", "/invoices/A/charge"), context);
    // The invoice lease (5 s) is below the remaining time + margin (21 s).
    const held = await pttlWhileHeld("invoice:A", context.startedAt);
    const response = await pending;
    expect(response.statusCode).toBe(200);
    expect(json(response.body)).toMatchObject({ id: "A", status: "charged", charges: 1 });
    expect(await gone("invoice:A")).toBe(true);
    expectTtl(held, 5_000);

    const again = await fn.handler(httpEventV2("POST", "/invoices/A/charge"), fakeContext(20_000));
    expect(json(again.body)).toMatchObject({ status: "already_paid", charges: 1 });
    expect(await gone("invoice:A")).toBe(true);
  });

  it("report rebuild: time-bound TTL, signal aborts before the deadline, the others get 409", async () => {
    const remaining = 2_500;
    const context = fakeContext(remaining);
    const pending = fn.handler(httpEventV2("POST", "/reports/daily/rebuild"), context);
    const held = await pttlWhileHeld("reports:daily", context.startedAt);
    // While the first invocation holds the report lock, four more arrive.
    const others = await Promise.all(
      Array.from({ length: 4 }, () =>
        fn.handler(httpEventV2("POST", "/reports/daily/rebuild"), fakeContext(10_000)),
      ),
    );
    const response = await pending;
    const answeredAt = performance.now();
    // min(lease 5000, remaining 2500 + margin 1000)
    expectTtl(held, 3_500);
    // The 12 s rebuild cannot fit: lock.signal stopped it before the function's deadline.
    expect(response.statusCode).toBe(503);
    expect(json(response.body)).toMatchObject({ title: "Lock lost", status: 503 });
    expect(answeredAt).toBeLessThan(context.deadline);
    expect(await gone("reports:daily")).toBe(true);
    for (const other of others) {
      expect(other.statusCode).toBe(409);
      expect(other.headers["content-type"]).toContain("application/problem+json");
      const seconds = Number(other.headers["retry-after"]);
      expect(seconds).toBeGreaterThanOrEqual(1);
      expect(seconds).toBeLessThanOrEqual(4);
    }
  });

  it("concurrent charges of one invoice: exactly one charge", async () => {
    const responses = await Promise.all(
      Array.from({ length: 5 }, () =>
        fn.handler(httpEventV2("POST", "/invoices/B/charge"), fakeContext(20_000)),
      ),
    );
    const bodies = responses.map((r) => ({ status: r.statusCode, body: json(r.body) }));
    const charged = bodies.filter((b) => b.body.status === "charged");
    expect(charged).toHaveLength(1);
    // The others were refused while the charge ran, or came after it and saw it paid.
    for (const b of bodies.filter((x) => x.body.status !== "charged")) {
      expect(b.status === 409 || b.body.status === "already_paid").toBe(true);
    }
    expect(Math.max(...bodies.map((b) => Number(b.body.charges ?? 0)))).toBe(1);
    expect(await gone("invoice:B")).toBe(true);
  });
});

describe("functions/lambda.chargeInvoice: withLock for asynchronous invokes", () => {
  it("busy → LockBusyError (Lambda retries the event); free → charged once", async () => {
    const holder = await fn.getLocks().acquire("invoice:C");
    const error = await fn.chargeInvoice({ invoiceId: "C" }, fakeContext(10_000)).catch((e) => e);
    expect(isLockBusyError(error)).toBe(true);
    await holder.release();
    const first = await fn.chargeInvoice({ invoiceId: "C" }, fakeContext(10_000));
    expect(first).toEqual({ invoiceId: "C", status: "charged", charges: 1 });
    expect(await gone("invoice:C")).toBe(true);
    const second = await fn.chargeInvoice({ invoiceId: "C" }, fakeContext(10_000));
    expect(second).toEqual({ invoiceId: "C", status: "already_paid", charges: 1 });
  });

  it("concurrent invocations: one charge, the others busy or already paid", async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        fn.chargeInvoice({ invoiceId: "D" }, fakeContext(10_000)).then(
          (value) => value.status,
          (error: unknown) => (isLockBusyError(error) ? "busy" : error),
        ),
      ),
    );
    expect(results.filter((r) => r === "charged")).toHaveLength(1);
    expect(results.every((r) => r === "charged" || r === "busy" || r === "already_paid")).toBe(
      true,
    );
    expect(await gone("invoice:D")).toBe(true);
  });

  it("an event without invoiceId fails before any node is called", async () => {
    await quietThenReset(dev.cluster);
    const error = await fn.chargeInvoice({} as never, fakeContext(10_000)).catch((e) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(dev.cluster.controls.map((c) => c.stats().requests)).toEqual([0, 0, 0]);
  });
});

describe("functions/lambda: configuration from the environment", () => {
  it("no nodes configured: ConfigurationError naming EDGELOCK_NODES; the app answers 500", async () => {
    const nodes = process.env.EDGELOCK_NODES;
    delete process.env.EDGELOCK_NODES;
    try {
      vi.resetModules();
      const fresh: LambdaModule = await import("../../functions/lambda");
      const error = await fresh
        .chargeInvoice({ invoiceId: "E" }, fakeContext(5_000))
        .catch((e: unknown) => e);
      expect(isConfigurationError(error) && error.option).toBe("EDGELOCK_NODES");
      const response = await fresh.handler(
        httpEventV2("POST", "/invoices/E/charge"),
        fakeContext(5_000),
      );
      expect(response.statusCode).toBe(500);
      expect(json(response.body)).toMatchObject({ title: "Misconfigured" });
    } finally {
      process.env.EDGELOCK_NODES = nodes;
    }
  });

  it("a malformed EDGELOCK_NODES is named without echoing any token", async () => {
    const nodes = process.env.EDGELOCK_NODES;
    process.env.EDGELOCK_NODES = '[{"url":"https://x.upstash.io","token":"SECRET-TOKEN"},';
    try {
      vi.resetModules();
      const fresh: LambdaModule = await import("../../functions/lambda");
      const error = await fresh
        .chargeInvoice({ invoiceId: "F" }, fakeContext(5_000))
        .catch((e: unknown) => e);
      expect(isConfigurationError(error) && error.option).toBe("EDGELOCK_NODES");
      expect(String((error as Error).message)).not.toContain("SECRET-TOKEN");
    } finally {
      process.env.EDGELOCK_NODES = nodes;
    }
  });
});
