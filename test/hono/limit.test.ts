/**
 * The Hono `limit()` middleware (docs/design/semaphore.md §4 "Adapters") in Node through
 * `app.request()`, against a real 3-node dev cluster: a burst of 3P requests never has more than P
 * handlers running (counted from the handlers' own start and end), the 429 problem and its
 * `Retry-After`, `wait` letting a burst through in waves, a streamed body holding its permit until
 * it ends, the 503 with a majority of nodes failing, answers `idempotency()` never keeps, and the
 * construction errors.
 */
import { type Context, Hono } from "hono";
import { stream } from "hono/streaming";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { idempotency, type LimitOptions, limit } from "../../src/adapters/hono/index";
import {
  ConfigurationError,
  createLocks,
  type Locks,
  type Permit,
  semaphore,
} from "../../src/index";
import { gate } from "../lambda/helpers";
import { readBack, resetCluster, sleep, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const N = 3;
const dev = useDevCluster({ nodes: N });
afterEach(() => resetCluster(dev.cluster));

const make = (prefix: string): Locks =>
  createLocks({
    ...{ nodes: dev.cluster.nodes, prefix, lease: 5_000, retryDelayMax: 100 },
    // Generous for a loaded machine: these tests count holders, not latency.
    requestTimeout: 1_500,
  });

/** An app whose `POST /run` holds `holdMs` under `limit()`, counting the handlers that overlap. */
function probeApp(
  options: Omit<LimitOptions, "key"> & { key?: LimitOptions["key"] },
  holdMs = 300,
) {
  const seen = { active: 0, most: 0, ran: 0, slots: new Set<number>() };
  const app = new Hono();
  app.post("/run", limit({ key: "api", ...options }), async (c) => {
    seen.active++;
    seen.ran++;
    seen.most = Math.max(seen.most, seen.active);
    seen.slots.add(c.var.permit.slot);
    await sleep(holdMs);
    seen.active--;
    return c.text("ok");
  });
  return { app, seen };
}

const burst = (app: Hono, n: number) =>
  Promise.all(Array.from({ length: n }, () => app.request("/run", { method: "POST" })));

describe("limit(): at most `permits` at once", () => {
  it("a burst of 3P with wait 0: never more than P handlers, the rest 429 with the problem", async () => {
    const P = 3;
    const locks = make(uniquePrefix("limit-burst"));
    const { app, seen } = probeApp({ locks, permits: P });
    const responses = await burst(app, 3 * P);
    const statuses = responses.map((r) => r.status);
    expect(seen.most).toBeLessThanOrEqual(P);
    expect(statuses.filter((s) => s === 200).length).toBe(seen.ran);
    expect(seen.ran).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
    for (const res of responses.filter((r) => r.status === 429)) {
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.headers.get("retry-after")).toBe("1");
      expect(await res.json()).toEqual({
        type: "urn:edgelock:problem:at-capacity",
        title: "Too Many Requests",
        status: 429,
        detail: expect.stringContaining("retry in 1 s"),
      });
    }
    // Every permit released with every node's answer before its response was answered.
    expect(await semaphore(locks, "api", { permits: P }).inspect()).toMatchObject({ held: 0 });
  });

  it("Retry-After is retryAfter in whole seconds, rounded up", async () => {
    const locks = make(uniquePrefix("limit-retry-after"));
    const holder = await semaphore(locks, "api", { permits: 1 }).acquire();
    for (const [retryAfter, header] of [
      [2_500, "3"],
      [1, "1"],
    ] as const) {
      const { app, seen } = probeApp({ locks, permits: 1, retryAfter });
      const res = await app.request("/run", { method: "POST" });
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe(header);
      expect(seen.ran).toBe(0);
    }
    await holder.release();
  });

  it("with wait, a burst of 3P all runs, in waves of at most P", async () => {
    const P = 3;
    const locks = make(uniquePrefix("limit-wait"));
    const { app, seen } = probeApp({ locks, permits: P, wait: 10_000 }, 150);
    const responses = await burst(app, 3 * P);
    expect(responses.map((r) => r.status)).toEqual(Array(3 * P).fill(200));
    expect(seen.ran).toBe(3 * P);
    expect(seen.most).toBeLessThanOrEqual(P);
    // Parallel, not one at a time: the permits are used side by side.
    expect(seen.most).toBeGreaterThanOrEqual(2);
    expect([...seen.slots].every((s) => s >= 0 && s < P)).toBe(true);
  });

  it("a key per tenant: tenants do not share permits; a missing parameter is a 500 naming key", async () => {
    const locks = make(uniquePrefix("limit-tenant"));
    const errors: unknown[] = [];
    const app = new Hono();
    app.onError((error, c) => {
      errors.push(error);
      return c.text("error", 500);
    });
    const release = gate();
    app.post(
      "/t/:tenant?",
      limit({ locks, permits: 1, key: (c) => c.req.param("tenant") }),
      async (c) => {
        await release.promise;
        return c.text(c.var.permit.key);
      },
    );
    const a = app.request("/t/a", { method: "POST" });
    const b = app.request("/t/b", { method: "POST" });
    await sleep(300);
    const secondA = await app.request("/t/a", { method: "POST" });
    expect(secondA.status).toBe(429);
    release.open();
    expect(await (await a).text()).toBe("a");
    expect(await (await b).text()).toBe("b");
    expect((await app.request("/t", { method: "POST" })).status).toBe(500);
    expect(errors[0]).toBeInstanceOf(ConfigurationError);
    expect(errors[0]).toMatchObject({ option: "key" });
  });

  it("key(c) returning an array is a 500 naming key that asks for one string (a semaphore has one name)", async () => {
    const errors: unknown[] = [];
    const app = new Hono();
    app.onError((error, c) => {
      errors.push(error);
      return c.text("error", 500);
    });
    const locks = make(uniquePrefix("limit-array"));
    app.post("/", limit({ locks, permits: 1, key: () => ["a", "b"] as never }), (c) =>
      c.text("ran"),
    );
    expect((await app.request("/", { method: "POST" })).status).toBe(500);
    expect(errors[0]).toMatchObject({ option: "key" });
    expect((errors[0] as Error).message).toBe(
      "invalid option `key`: key(c) returned [a, b], expected a non-empty string (does the route have the parameter it reads?)",
    );
  });
});

describe("limit(): the whole response under the permit", () => {
  it("a streamed body holds its permit until it ends", async () => {
    const prefix = uniquePrefix("limit-stream");
    const locks = make(prefix);
    const chunk = gate();
    let held: Permit | undefined;
    const app = new Hono();
    app.post("/run", limit({ locks, key: "s", permits: 1 }), (c) => {
      held = c.var.permit;
      return stream(c, async (s) => {
        await s.write("first;");
        await chunk.promise;
        await s.write("last");
      });
    });
    const first = await app.request("/run", { method: "POST" });
    expect(first.status).toBe(200);
    const permit = held as Permit;
    // The handler returned; its body is still being produced: the slot is still held.
    const slotKey = `${prefix}${permit.keys[0]}`;
    expect((await readBack(dev, N, slotKey)).filter((v) => v === permit.token).length).toBe(N);
    expect((await app.request("/run", { method: "POST" })).status).toBe(429);
    chunk.open();
    expect(await first.text()).toBe("first;last");
    // The body's end reached the reader only after the release settled on every node.
    expect(await readBack(dev, N, slotKey)).toEqual([null, null, null]);
    expect(permit.signal.aborted).toBe(true);
    const next = await app.request("/run", { method: "POST" });
    expect(next.status).toBe(200);
    await next.text();
  });

  it("503 with a majority of nodes failing, told to onUnavailable; the handler does not run", async () => {
    const locks = make(uniquePrefix("limit-down"));
    const told: { route: string; key: unknown; error: Error }[] = [];
    const { app, seen } = probeApp({
      locks,
      permits: 2,
      onUnavailable: (_c: Context, info) => void told.push(info),
    });
    for (const i of [0, 1]) dev.cluster.controls[i]?.inject({ kind: "status", status: 503 });
    const res = await app.request("/run?sig=s3cr3t", { method: "POST" });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toMatchObject({
      type: "urn:edgelock:problem:lock-unavailable",
      status: 503,
      detail: "Too few lock nodes answered to decide who holds the permits.",
    });
    expect(seen.ran).toBe(0);
    expect(told).toHaveLength(1);
    // Named as the semaphore it is, in the info and in the error's words.
    expect(told[0]).toMatchObject({ route: "POST /run", key: "api", subject: "semaphore" });
    expect(told[0]?.error.name).toBe("QuorumError");
    expect(told[0]?.error.message).toMatch(/^semaphore "api": /);
  });

  it("idempotency() never keeps its answers: a 429, and an onBusy 200 either", async () => {
    const locks = make(uniquePrefix("limit-idem"));
    for (const onBusy of [undefined, (c: Context) => c.text("later", 200)]) {
      let ran = 0;
      const app = new Hono();
      app.post(
        "/charge",
        idempotency({ locks }),
        limit({ locks, key: "api", permits: 1, ...(onBusy === undefined ? {} : { onBusy }) }),
        (c) => {
          ran++;
          return c.text("charged", 201);
        },
      );
      const key = crypto.randomUUID();
      const request = () =>
        app.request("/charge", {
          method: "POST",
          headers: { "Idempotency-Key": key, "content-type": "application/json" },
          body: "{}",
        });
      const holder = await semaphore(locks, "api", { permits: 1 }).acquire();
      const busy = await request();
      expect(busy.status).toBe(onBusy === undefined ? 429 : 200);
      await holder.release({ settled: true });
      const retry = await request();
      expect(retry.status).toBe(201);
      expect(retry.headers.get("idempotency-replayed")).toBeNull();
      expect(ran).toBe(1);
    }
  });
});

describe("limit(): construction", () => {
  const locks = createLocks({ nodes: [{ url: "http://127.0.0.1:1", token: "t" }] });
  const ok = { locks, key: "k", permits: 2 };
  const cases: [string, unknown][] = [
    ["options", null],
    ["locks", { key: "k", permits: 2 }],
    ["locks", { ...ok, locks: {} }],
    ["key", { locks, permits: 2 }],
    ["key", { ...ok, key: "" }],
    ["key", { ...ok, key: 5 }],
    ["key", { ...ok, key: "k:permits" }],
    ["permits", { locks, key: "k" }],
    ["permits", { ...ok, permits: 0 }],
    ["permits", { ...ok, permits: 65 }],
    ["permits", { ...ok, permits: 1.5 }],
    ["permits", { ...ok, locks: () => locks, permits: "3" }],
    ["lease", { ...ok, lease: 0 }],
    ["wait", { ...ok, wait: -1 }],
    ["retryAfter", { ...ok, retryAfter: 0 }],
    ["exposeDetails", { ...ok, exposeDetails: "yes" }],
    ["unreadBodyTimeout", { ...ok, unreadBodyTimeout: 0 }],
    ["budget", { ...ok, budget: 1_000 }],
    ["onBusy", { ...ok, onBusy: 429 }],
    ["onError", { ...ok, onError: "503" }],
    ["onUnavailable", { ...ok, onUnavailable: 5 }],
    ["permit", { ...ok, permit: 2 }],
    ["fencing", { ...ok, fencing: true }],
  ];
  it.each(cases)("names the bad option `%s`", (option, options) => {
    const build = () => limit(options as LimitOptions);
    expect(build).toThrow(ConfigurationError);
    expect(build).toThrow(expect.objectContaining({ option }));
  });

  it("types c.var.permit as Permit", () => {
    const app = new Hono<{ Bindings: { TENANT: string } }>();
    app.post("/x", limit({ locks, key: (c) => c.env.TENANT, permits: 2 }), (c) => {
      expectTypeOf(c.var.permit).toEqualTypeOf<Permit>();
      return c.text("ok");
    });
  });
});
