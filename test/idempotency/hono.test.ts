/**
 * The Hono `idempotency()` middleware against a real 3-node dev cluster: every row of
 * docs/IDEMPOTENCY.md "Answers", asserted by statuses, bodies, handler runs and what the nodes keep.
 */
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { idempotency } from "../../src/adapters/hono";
import { createLocks, type LocksOptions } from "../../src/index";
import { readBack, resetCluster, sleep, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });

afterEach(() => {
  for (const control of dev.cluster.controls) control.resume();
  resetCluster(dev.cluster);
});

type Options = Omit<Parameters<typeof idempotency>[0], "locks">;

/** An app whose POST /charge/:id counts its runs and answers 201 with the run number. */
function setup(options: Options = {}, locksOptions: Partial<LocksOptions> = {}) {
  const prefix = uniquePrefix("idem");
  const locks = createLocks({
    nodes: dev.cluster.nodes,
    prefix,
    requestTimeout: 300,
    ...locksOptions,
  });
  const runs: string[] = [];
  let behave: "ok" | "slow" | "fail" | "throw" | "big" = "ok";
  const app = new Hono();
  app.onError((error, c) => c.text(`error: ${error.message}`, 500));
  app.use("/charge/*", idempotency({ locks, ...options }));
  app.on(["POST", "GET", "PUT"], "/charge/:id", async (c) => {
    const body = await c.req.text();
    runs.push(`${c.req.param("id")}:${body}`);
    if (behave === "slow") await sleep(300);
    if (behave === "fail") return c.json({ error: "provider down" }, 502);
    if (behave === "throw") throw new Error("boom");
    c.header("Set-Cookie", "session=secret");
    c.header("Location", `/charges/${runs.length}`);
    if (behave === "big") return c.text("x".repeat(100), 201);
    return c.json({ charge: runs.length, body }, 201);
  });
  const send = (
    key: string | undefined,
    body = "amount=5",
    init: RequestInit = {},
    path = "/charge/A",
  ) =>
    app.request(path, {
      method: "POST",
      body,
      ...init,
      headers: {
        ...(key === undefined ? {} : { "Idempotency-Key": key }),
        ...(init.headers ?? {}),
      },
    });
  return { prefix, locks, app, runs, send, set: (b: typeof behave) => (behave = b) };
}

const problemOf = async (res: Response) => {
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  return (await res.json()) as { type: string; title: string; status: number; detail: string };
};

describe("idempotency(): which requests it handles", () => {
  it("passes through other methods, and requests without a key unless required", async () => {
    const { app, runs, send } = setup();
    expect((await app.request("/charge/A", { method: "GET" })).status).toBe(201);
    expect((await send(undefined)).status).toBe(201);
    expect((await send(undefined)).status).toBe(201);
    expect(runs).toHaveLength(3);
    const strict = setup({ required: true });
    const res = await strict.send(undefined);
    expect(res.status).toBe(400);
    expect(await problemOf(res)).toMatchObject({
      title: "Idempotency-Key required",
      type: expect.stringContaining("#section-2.7"),
    });
    expect(strict.runs).toHaveLength(0);
  });

  it.each([
    ["a broken quoted string", '"abc', "not a structured-field string"],
    ["empty", '""', "the key is empty"],
    ["too long", `"${"k".repeat(256)}"`, "longer than 255"],
    ["bad escape", '"a\\b"', "backslash"],
    ["non-ASCII", '"kéy"', "printable ASCII"],
  ])("a key that is %s → 400, handler not run", async (_name, key, why) => {
    const { runs, send } = setup();
    const res = await send(key);
    expect(res.status).toBe(400);
    const problem = await problemOf(res);
    expect(problem.type).toContain("#section-2.1");
    expect(problem.detail).toContain(why);
    expect(runs).toHaveLength(0);
  });
});

describe("idempotency(): one run per key", () => {
  it("first request runs; a retry gets the stored response replayed, without Set-Cookie", async () => {
    const { runs, send, prefix } = setup({ ttl: 60_000 });
    const first = await send('"k1"');
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotency-replayed")).toBeNull();
    const firstBody = await first.text();
    for (let i = 0; i < 3; i++) {
      const again = await send('"k1"');
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotency-replayed")).toBe("true");
      expect(again.headers.get("location")).toBe("/charges/1");
      expect(again.headers.get("set-cookie")).toBeNull();
      expect(await again.text()).toBe(firstBody);
    }
    expect(runs).toEqual(["A:amount=5"]);
    // The record lives in the key's done marker on every node, kept for ttl.
    // (Beside it the key's queue `…:wait`, a hash naming the last holder placed, lives the lease.)
    const keys = (await dev.direct(0).keys(`${prefix}idempotency:*`)).filter(
      (key) => !key.endsWith(":wait"),
    );
    expect(keys).toHaveLength(1);
    const pttl = await dev.direct(0).pttl(keys[0] as string);
    expect(pttl).toBeGreaterThan(50_000);
    expect(pttl).toBeLessThanOrEqual(60_000);
    const values = await readBack(dev, 3, keys[0] as string);
    for (const value of values) expect(value).toMatch(/^done:[0-9a-f]{32}\|\{"v":1,/);
    expect(values.join()).not.toContain("secret");
  });

  it("concurrent duplicates: one run, the others 409 with Retry-After", async () => {
    const { runs, send, set } = setup();
    set("slow");
    const all = await Promise.all(Array.from({ length: 5 }, () => send('"k2"')));
    const statuses = all.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409]);
    for (const res of all.filter((r) => r.status === 409)) {
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(await problemOf(res)).toMatchObject({ title: "Request in progress", status: 409 });
    }
    expect(runs).toHaveLength(1);
  });

  it("with wait, a duplicate waits for the first request's result and gets it replayed", async () => {
    const { runs, send, set } = setup({ wait: 3_000 });
    set("slow");
    const [a, b] = await Promise.all([send('"k3"'), sleep(50).then(() => send('"k3"'))]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get("idempotency-replayed")).toBe("true");
    expect(await b.text()).toBe(await a.text());
    expect(runs).toHaveLength(1);
  });

  it("same key, another body or path → 422, handler not run", async () => {
    const { runs, send } = setup();
    expect((await send('"k4"', "amount=5")).status).toBe(201);
    const otherBody = await send('"k4"', "amount=500");
    expect(otherBody.status).toBe(422);
    expect(await problemOf(otherBody)).toMatchObject({ title: "Idempotency-Key reused" });
    expect((await send('"k4"', "amount=5", {}, "/charge/B")).status).toBe(422);
    expect(runs).toHaveLength(1);
  });

  it("a 5xx or a throw stores nothing and releases the claim: a retry runs again", async () => {
    const { runs, send, set, prefix } = setup();
    set("fail");
    expect((await send('"k5"')).status).toBe(502);
    set("throw");
    expect((await send('"k5"')).status).toBe(500);
    set("ok");
    expect((await send('"k5"')).status).toBe(201);
    expect(runs).toHaveLength(3);
    const replay = await send('"k5"');
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect(runs).toHaveLength(3);
    const keys = await dev.direct(0).keys(`${prefix}idempotency:*`);
    expect(keys.filter((key) => !key.endsWith(":wait"))).toHaveLength(1);
  });

  it("a claim lost mid-run stores nothing: the handler's signal aborts, a retry runs again", async () => {
    const prefix = uniquePrefix("idem-lost");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 100 });
    let runs = 0;
    const app = new Hono();
    app.post("/x", idempotency({ locks, lease: 400 }), async (c) => {
      runs += 1;
      if (runs === 1) {
        // Another party deletes the claim on every node; the next extension finds it gone.
        const keys = (await dev.direct(0).keys(`${prefix}idempotency:*`)).filter(
          (key) => !key.endsWith(":wait"),
        );
        for (let i = 0; i < 3; i++) await dev.direct(i).del(keys[0] as string);
        const signal = c.var.idempotencyClaim?.signal;
        await new Promise((resolve) => signal?.addEventListener("abort", resolve));
      }
      return c.text(`run ${runs}`, 200);
    });
    const post = () =>
      app.request("/x", { method: "POST", headers: { "Idempotency-Key": '"k6"' } });
    expect(await (await post()).text()).toBe("run 1");
    expect(await (await post()).text()).toBe("run 2");
    const replay = await post();
    expect([await replay.text(), replay.headers.get("idempotency-replayed")]).toEqual([
      "run 2",
      "true",
    ]);
  });

  it("a body over maxBody is answered, then kept as completed without replay: retries get 409", async () => {
    const { runs, send, set } = setup({ maxBody: 10 });
    set("big");
    const first = await send('"k7"');
    expect([first.status, (await first.text()).length]).toEqual([201, 100]);
    const retry = await send('"k7"');
    expect(retry.status).toBe(409);
    expect(await problemOf(retry)).toMatchObject({
      title: "Request already processed",
      detail: expect.stringContaining("(status 201)"),
    });
    expect(runs).toHaveLength(1);
  });
});

describe("idempotency(): scope, nodes and faults", () => {
  it("keys are scoped by caller: the same key from two callers runs twice, each replays its own", async () => {
    const { runs, send } = setup();
    const alice = { headers: { Authorization: "Bearer alice" } };
    const bob = { headers: { Authorization: "Bearer bob" } };
    const a = await (await send('"same"', "amount=5", alice)).text();
    const b = await (await send('"same"', "amount=5", bob)).text();
    expect(runs).toHaveLength(2);
    expect(a).not.toBe(b);
    expect(await (await send('"same"', "amount=5", alice)).text()).toBe(a);
    expect(await (await send('"same"', "amount=5", bob)).text()).toBe(b);
    expect(runs).toHaveLength(2);
    // A custom scope (a user id) instead of the credentials.
    const scoped = setup({ scope: (c) => c.req.header("x-user") ?? "anon" });
    await scoped.send('"s"', "amount=5", {
      headers: { "x-user": "u1", Authorization: "Bearer 1" },
    });
    const again = await scoped.send('"s"', "amount=5", {
      headers: { "x-user": "u1", Authorization: "Bearer 2" },
    });
    expect(again.headers.get("idempotency-replayed")).toBe("true");
  });

  it("a record on a minority of nodes only still replays", async () => {
    const { runs, send, prefix } = setup();
    const first = await (await send('"k8"')).text();
    const [key] = (await dev.direct(0).keys(`${prefix}idempotency:*`)).filter(
      (key) => !key.endsWith(":wait"),
    );
    await dev.direct(1).del(key as string);
    await dev.direct(2).del(key as string);
    const replay = await send('"k8"');
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect(await replay.text()).toBe(first);
    expect(runs).toHaveLength(1);
  });

  it("a majority of nodes down → 503, handler not run (exposeDetails: the nodes)", async () => {
    const { runs, send } = setup({ exposeDetails: true });
    dev.cluster.controls[1]?.pause();
    dev.cluster.controls[2]?.pause();
    const res = await send('"k9"');
    expect(res.status).toBe(503);
    const problem = await problemOf(res);
    expect(problem.title).toBe("Lock service unavailable");
    expect(problem.detail).toContain("node 1 (");
    for (const node of dev.cluster.nodes) expect(problem.detail).not.toContain(node.token);
    expect(runs).toHaveLength(0);
  });
});
