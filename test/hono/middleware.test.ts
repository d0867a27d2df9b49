/**
 * The Hono `lock()` middleware in Node through `app.request()`, against a real 3-node dev cluster:
 * the option matrix (keys, `locks` as a function, custom responses, budget sources, fencing) and
 * construction errors. TTLs are read back from the redis-servers directly.
 */
import { type Env, Hono } from "hono";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import {
  budget,
  ConfigurationError,
  createLocks,
  type Lock,
  type LockEvent,
  type Locks,
  type LocksOptions,
} from "../../src";
import { type LockOptions, lock } from "../../src/adapters/hono";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });

afterEach(() => {
  for (const control of dev.cluster.controls) control.clearFaults();
});

function testLocks(options: Partial<LocksOptions> = {}) {
  const prefix = `t:${crypto.randomUUID()}:`;
  const events: LockEvent[] = [];
  const locks = createLocks({
    nodes: dev.cluster.nodes,
    prefix,
    onEvent: (e) => events.push(e),
    ...options,
  });
  /** Largest PTTL of `key` over the nodes, read from redis-server directly (−2: absent). */
  const pttl = async (key: string) => {
    const all = await Promise.all([0, 1, 2].map((i) => dev.direct(i).pttl(`${prefix}${key}`)));
    return Math.max(...all);
  };
  /**
   * `pttl(key)` once the key is gone everywhere, or its last reading after 3 s: a release is
   * decided by a majority, and the last node's delete may land a moment later.
   */
  const pttlOnceGone = async (key: string) => {
    const until = performance.now() + 3_000;
    for (;;) {
      const value = await pttl(key);
      if (value === -2 || performance.now() > until) return value;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { locks, events, pttl, pttlOnceGone };
}

// biome-ignore lint/suspicious/noExplicitAny: any app env
const post = (app: Hono<any>, path: string, env?: unknown, ctx?: unknown) =>
  app.request(path, { method: "POST" }, env, ctx as never);

/** A fake Workers ExecutionContext that collects what goes to waitUntil. */
function fakeExecutionCtx() {
  const pending: Promise<unknown>[] = [];
  return {
    pending,
    ctx: {
      waitUntil: (p: Promise<unknown>) => pending.push(p),
      passThroughOnException() {},
      props: {},
    },
  };
}

describe("lock(): construction", () => {
  const locks = createLocks({ nodes: [{ url: "http://127.0.0.1:1", token: "t" }] });
  const cases: [string, Record<string, unknown>][] = [
    ["options", null as never],
    ["locks", { key: () => "k" }],
    ["locks", { locks: {}, key: () => "k" }],
    ["key", { locks }],
    ["key", { locks, key: "k" }],
    ["lease", { locks, key: () => "k", lease: 0 }],
    ["lease", { locks, key: () => "k", lease: 1.5 }],
    ["wait", { locks, key: () => "k", wait: -1 }],
    ["fencing", { locks, key: () => "k", fencing: "yes" }],
    ["budget", { locks, key: () => "k", budget: budget.within(1_000) }],
    ["onBusy", { locks, key: () => "k", onBusy: 409 }],
    ["onError", { locks, key: () => "k", onError: "503" }],
    ["leese", { locks, key: () => "k", leese: 1_000 }],
  ];
  it.each(cases)("names the bad option `%s`", (option, options) => {
    const build = () => lock(options as unknown as LockOptions);
    expect(build).toThrow(ConfigurationError);
    expect(build).toThrow(expect.objectContaining({ option }));
  });

  it("types c.var.lock as Lock", () => {
    const app = new Hono<{ Bindings: { LOCK_PREFIX: string } }>();
    app.post("/x", lock({ locks, key: () => "x" }), (c) => {
      expectTypeOf(c.var.lock).toEqualTypeOf<Lock>();
      expectTypeOf(c.env.LOCK_PREFIX).toEqualTypeOf<string>();
      return c.text("ok");
    });
    lock<{ Bindings: { N: string } }>({
      locks: (c) => {
        expectTypeOf(c.env.N).toEqualTypeOf<string>();
        return locks;
      },
      key: (c) => c.env.N,
    });
  });
});

describe("lock(): options", () => {
  it("a route parameter as the key: strict-typed, and a missing one is a ConfigurationError", async () => {
    const { locks } = testLocks();
    const app = new Hono();
    const errors: unknown[] = [];
    app.onError((error, c) => {
      errors.push(error);
      return c.text("error", 500);
    });
    // `c.req.param("id")` is `string | undefined` to hono without the path: accepted as a key.
    app.post("/by/:id", lock({ locks, key: (c) => c.req.param("id") }), (c) =>
      c.text(c.var.lock.key),
    );
    // The documented idiom with a prefix keeps the check; the path as a type argument types it.
    app.post(
      "/no-id",
      lock({ locks, key: (c) => c.req.param("id") && `i:${c.req.param("id")}` }),
      (c) => c.text("ran"),
    );
    lock<Env, "/typed/:id">({
      locks,
      key: (c) => {
        expectTypeOf(c.req.param("id")).toEqualTypeOf<string>();
        return c.req.param("id");
      },
    });
    const ok = await post(app, "/by/42");
    expect([ok.status, await ok.text()]).toEqual([200, "42"]);
    const missing = await post(app, "/no-id");
    expect(missing.status).toBe(500);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      name: "ConfigurationError",
      option: "key",
      message:
        "invalid option `key`: key(c) returned undefined, expected a non-empty string or a non-empty array of them (does the route have the parameter it reads?)",
    });
  });

  it("a key function may return several keys: a transfer locks both accounts, in any order", async () => {
    const { locks, pttl } = testLocks();
    const app = new Hono();
    let inside = 0;
    let most = 0;
    app.post(
      "/transfer/:from/:to",
      lock({
        locks,
        key: (c) => [`account:${c.req.param("from")}`, `account:${c.req.param("to")}`],
      }),
      async (c) => {
        most = Math.max(most, ++inside);
        const held = c.var.lock;
        const ttls = await Promise.all(held.keys.map((k) => pttl(k)));
        await new Promise((resolve) => setTimeout(resolve, 30));
        inside--;
        return c.json({ keys: held.keys, held: ttls.every((t) => t > 0) });
      },
    );
    const ok = await post(app, "/transfer/2/1");
    expect(await ok.json()).toEqual({ keys: ["account:1", "account:2"], held: true });
    // Opposite directions at once: one runs, the other is told the accounts are busy.
    const both = await Promise.all([post(app, "/transfer/1/2"), post(app, "/transfer/2/1")]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(most).toBe(1);
    expect(await (await post(app, "/transfer/1/1")).json()).toEqual({
      keys: ["account:1"],
      held: true,
    });
    const empty = new Hono();
    empty.onError((error, c) => c.text((error as ConfigurationError).option, 500));
    empty.post("/", lock({ locks, key: () => [] }), (c) => c.text("ran"));
    expect(await (await post(empty, "/")).text()).toBe("key");
  });

  it("accepts sync and async key functions", async () => {
    const { locks, pttl } = testLocks();
    const seen: string[] = [];
    const app = new Hono();
    const record = async (held: Lock) => seen.push(`${held.key}:${(await pttl(held.key)) > 0}`);
    app.post("/sync/:id", lock({ locks, key: (c) => `s:${c.req.param("id")}` }), async (c) => {
      await record(c.var.lock);
      return c.text("ok");
    });
    app.post(
      "/async/:id",
      lock({ locks, key: async (c) => `a:${(await c.req.text()) || c.req.param("id")}` }),
      async (c) => {
        await record(c.var.lock);
        return c.text("ok");
      },
    );
    expect((await post(app, "/sync/1")).status).toBe(200);
    expect((await post(app, "/async/2")).status).toBe(200);
    expect(seen).toEqual(["s:1:true", "a:2:true"]);
  });

  it("calls a locks function per request; a WeakMap per env builds one manager per env", async () => {
    const built: object[] = [];
    const cache = new WeakMap<object, Locks>();
    const locksFor = (env: { prefix: string }) => {
      let locks = cache.get(env);
      if (locks === undefined) {
        locks = createLocks({ nodes: dev.cluster.nodes, prefix: env.prefix });
        cache.set(env, locks);
        built.push(env);
      }
      return locks;
    };
    const app = new Hono<{ Bindings: { prefix: string } }>();
    app.post("/k", lock({ locks: (c) => locksFor(c.env), key: () => "k" }), (c) => c.text("ok"));
    const envA = { prefix: `a:${crypto.randomUUID()}:` };
    const envB = { prefix: `b:${crypto.randomUUID()}:` };
    for (const env of [envA, envA, envB, envA])
      expect((await post(app, "/k", env)).status).toBe(200);
    expect(built).toEqual([envA, envB]);
  });

  it("answers 409 with Retry-After: 1, whatever the holder's remaining time", async () => {
    const { locks } = testLocks();
    const holder = await locks.acquire("held", { lease: 2_500 });
    const app = new Hono();
    app.post("/held", lock({ locks, key: () => "held" }), (c) => c.text("ran"));
    const res = await post(app, "/held");
    await holder.release();
    expect(res.status).toBe(409);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["detail", "status", "title", "type"]);
    expect(body.status).toBe(409);
  });

  it("uses custom onBusy and onError responses", async () => {
    const { locks } = testLocks({ lease: 2_000 });
    const holder = await locks.acquire("custom");
    const app = new Hono();
    app.post(
      "/custom",
      lock({
        locks,
        key: () => "custom",
        onBusy: (c, error) => c.json({ busy: error.key, retryAfter: error.retryAfter }, 423),
        onError: (c, error) => c.json({ failed: error.name }, 502),
      }),
      (c) => c.text("ran"),
    );
    const busy = await post(app, "/custom");
    expect(busy.status).toBe(423);
    expect(await busy.json()).toMatchObject({ busy: "custom", retryAfter: expect.any(Number) });
    await holder.release();

    for (const i of [0, 1]) dev.cluster.controls[i]?.inject({ kind: "status", status: 500 });
    const failed = await post(app, "/custom");
    expect(failed.status).toBe(502);
    expect(await failed.json()).toEqual({ failed: "QuorumError" });
  });

  it("answers 503 with Retry-After when no majority answers, 503 without on an empty budget", async () => {
    const { locks } = testLocks({ lease: 2_000 });
    const app = new Hono();
    app.post("/q", lock({ locks, key: () => "q", exposeDetails: true }), (c) => c.text("ran"));
    app.post("/b", lock({ locks, key: () => "b", budget: () => budget.within(0) }), (c) =>
      c.text("ran"),
    );
    for (const i of [1, 2]) dev.cluster.controls[i]?.inject({ kind: "status", status: 500 });
    const quorum = await post(app, "/q");
    expect(quorum.status).toBe(503);
    expect(quorum.headers.get("retry-after")).toBe("1");
    const problem = (await quorum.json()) as { type: string; detail: string };
    expect(problem.type).toBe("urn:edgelock:problem:lock-unavailable");
    // With exposeDetails, the detail says which nodes failed and why, as the QuorumError does
    // (never a token).
    const host = (i: number) => new URL(dev.cluster.nodes[i]?.url ?? "").host;
    expect(problem.detail).toMatch(
      /^Too few lock nodes answered to decide who holds the lock\. lock "q": no majority \(2 of 3 nodes needed; 2 failed, 0 held\): /,
    );
    expect(problem.detail).toContain(`node 1 (${host(1)}): `);
    expect(problem.detail).toContain(`node 2 (${host(2)}): `);
    for (const node of dev.cluster.nodes) expect(problem.detail).not.toContain(node.token);

    for (const control of dev.cluster.controls) control.clearFaults();
    const exhausted = await post(app, "/b");
    expect(exhausted.status).toBe(503);
    expect(exhausted.headers.get("retry-after")).toBeNull();
    expect(await exhausted.json()).toMatchObject({ type: "urn:edgelock:problem:budget-exhausted" });
  });

  it("passes the handler's error to app.onError and still releases", async () => {
    const { locks, pttlOnceGone } = testLocks();
    const boom = new TypeError("handler bug");
    let seen: unknown;
    const app = new Hono();
    app.onError((error, c) => {
      seen = error;
      return c.text("custom 500", 500);
    });
    app.post("/boom", lock({ locks, key: () => "boom" }), () => {
      throw boom;
    });
    const res = await post(app, "/boom");
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("custom 500");
    expect(seen).toBe(boom);
    expect(await pttlOnceGone("boom")).toBe(-2);
  });

  it("fencing: true requires a fencing lock manager", async () => {
    const plain = testLocks();
    const fenced = testLocks({ fencing: true });
    const app = new Hono();
    let fence: number | undefined;
    app.post("/plain", lock({ locks: plain.locks, key: () => "f", fencing: true }), (c) =>
      c.text("ran"),
    );
    app.post("/fenced", lock({ locks: fenced.locks, key: () => "f", fencing: true }), (c) => {
      fence = c.var.lock.fence;
      return c.text("ran");
    });
    let error: unknown;
    app.onError((e, c) => {
      error = e;
      return c.text("misconfigured", 500);
    });
    expect((await post(app, "/plain")).status).toBe(500);
    expect(error).toMatchObject({ name: "ConfigurationError", option: "fencing" });
    expect(await plain.pttlOnceGone("f")).toBe(-2);

    expect((await post(app, "/fenced")).status).toBe(200);
    const first = fence ?? 0;
    expect((await post(app, "/fenced")).status).toBe(200);
    expect(fence).toBeGreaterThan(first);
  });
});

describe("lock(): budget sources", () => {
  const lease = 60_000;

  it("Lambda (c.env.lambdaContext): TTL = remaining time + margin, release awaited", async () => {
    const { locks, pttl, pttlOnceGone } = testLocks();
    const app = new Hono();
    let ttl = 0;
    app.post("/l", lock({ locks, key: () => "l", lease }), async (c) => {
      ttl = await pttl("l");
      return c.text("ok");
    });
    const lambdaContext = { getRemainingTimeInMillis: () => 3_000 };
    expect((await post(app, "/l", { lambdaContext })).status).toBe(200);
    expect(ttl).toBeGreaterThan(3_000);
    expect(ttl).toBeLessThanOrEqual(4_000);
    expect(await pttlOnceGone("l")).toBe(-2);
  });

  it("Workers (c.executionCtx): fetch budget, release through waitUntil", async () => {
    const { locks, events, pttl, pttlOnceGone } = testLocks();
    const { ctx, pending } = fakeExecutionCtx();
    const app = new Hono();
    let ttl = 0;
    app.post("/w", lock({ locks, key: () => "w", lease }), async (c) => {
      ttl = await pttl("w");
      // The release is the next request on every node: slow it down.
      for (const control of dev.cluster.controls)
        control.inject({ kind: "latency", ms: 200, count: 1 });
      return c.text("ok");
    });
    expect((await post(app, "/w", {}, ctx)).status).toBe(200);
    expect(ttl).toBeGreaterThan(29_000);
    expect(ttl).toBeLessThanOrEqual(31_000);
    expect(pending).toHaveLength(1);
    expect(events.some((e) => e.type === "release")).toBe(false);
    await Promise.all(pending);
    expect(events.find((e) => e.type === "release")).toMatchObject({ result: "released" });
    expect(await pttlOnceGone("w")).toBe(-2);
  });

  it("neither: no budget, TTL = lease, release awaited", async () => {
    const { locks, pttl, pttlOnceGone } = testLocks();
    const app = new Hono();
    let ttl = 0;
    app.post("/n", lock({ locks, key: () => "n", lease }), async (c) => {
      ttl = await pttl("n");
      return c.text("ok");
    });
    expect((await post(app, "/n")).status).toBe(200);
    expect(ttl).toBeGreaterThan(31_000);
    expect(ttl).toBeLessThanOrEqual(lease);
    expect(await pttlOnceGone("n")).toBe(-2);
  });

  it("an explicit budget option wins over the platform's, and may return undefined", async () => {
    const { locks, pttl } = testLocks();
    const ttls: Record<string, number> = {};
    const app = new Hono();
    app.post(
      "/x",
      lock({ locks, key: () => "x", lease, budget: () => budget.within(5_000) }),
      async (c) => {
        ttls.x = await pttl("x");
        return c.text("ok");
      },
    );
    app.post("/u", lock({ locks, key: () => "u", lease, budget: () => undefined }), async (c) => {
      ttls.u = await pttl("u");
      return c.text("ok");
    });
    const lambdaContext = { getRemainingTimeInMillis: () => 20_000 };
    expect((await post(app, "/x", { lambdaContext })).status).toBe(200);
    expect((await post(app, "/u", {}, fakeExecutionCtx().ctx)).status).toBe(200);
    expect(ttls.x).toBeGreaterThan(5_000);
    expect(ttls.x).toBeLessThanOrEqual(6_000);
    expect(ttls.u).toBeGreaterThan(31_000);
  });
});
