/**
 * The rest of the rows of docs/IDEMPOTENCY.md "Answers" inside workerd, with a real `ExecutionContext` (the deployable
 * Worker's route covers replay, 409, 422 and 400 in idempotency.test.ts): pass-through, `required`,
 * key syntax, `wait`, 5xx / throw / lost claim store nothing, `maxBody`, caller scope, and a
 * majority down → 503.
 */
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import type { LocksOptions } from "../../src";
import { idempotency } from "../../src/adapters/hono";
import { call, healAll, injectFault, nodes, sleep, testLocks } from "./support/cluster";

type Options = Omit<Parameters<typeof idempotency>[0], "locks">;
type Behaviour = "ok" | "slow" | "fail" | "throw" | "big";

/** POST /charge/:id counts its runs; `behave` picks what the next runs answer. */
function setup(options: Options = {}, locksOptions: Partial<LocksOptions> = {}) {
  const { locks } = testLocks({ requestTimeout: 1_000, ...locksOptions });
  const runs: string[] = [];
  let behave: Behaviour = "ok";
  const app = new Hono();
  app.onError((error, c) => c.text(`error: ${error.message}`, 500));
  app.use("/charge/*", idempotency({ locks, ...options }));
  app.on(["POST", "GET"], "/charge/:id", async (c) => {
    const body = await c.req.text();
    runs.push(body);
    if (behave === "slow") await sleep(300);
    if (behave === "fail") return c.json({ error: "provider down" }, 502);
    if (behave === "throw") throw new Error("boom");
    c.header("Set-Cookie", "session=secret");
    if (behave === "big") return c.text("x".repeat(100), 201);
    return c.json({ charge: runs.length, body }, 201);
  });
  /** One request; resolves once its `waitUntil` work (the claim's release) is done too. */
  const send = async (key: string | undefined, init: RequestInit = {}, body = "amount=5") => {
    const headers = new Headers(init.headers);
    if (key !== undefined) headers.set("Idempotency-Key", key);
    const { response, settled } = call(app, "/charge/A", {
      method: "POST",
      body: init.method === "GET" ? null : body,
      ...init,
      headers,
    });
    const res = await response;
    const text = await res.text();
    await settled;
    return { res, text };
  };
  return { runs, send, set: (b: Behaviour) => (behave = b) };
}

const problem = (text: string) => JSON.parse(text) as { title: string; detail: string };
const fresh = () => `"${crypto.randomUUID()}"`;

afterEach(healAll);

describe("idempotency() inside workerd: the rest of the table", () => {
  it("passes through other methods and requests without a key; required → 400", async () => {
    const open = setup();
    expect((await open.send(fresh(), { method: "GET" })).res.status).toBe(201);
    expect((await open.send(undefined)).res.status).toBe(201);
    expect((await open.send(undefined)).res.status).toBe(201);
    expect(open.runs).toHaveLength(3);
    const strict = setup({ required: true });
    const missing = await strict.send(undefined);
    expect(missing.res.status).toBe(400);
    expect(missing.res.headers.get("content-type")).toBe("application/problem+json");
    expect(problem(missing.text).title).toBe("Idempotency-Key required");
    for (const bad of ['""', `"${"k".repeat(256)}"`, '"unclosed', 'bare"quote', "k".repeat(256)]) {
      expect((await strict.send(bad)).res.status).toBe(400);
    }
    expect(strict.runs).toHaveLength(0);
  });

  it("a duplicate with wait gets the first answer replayed, not 409", async () => {
    const { runs, send, set } = setup({ wait: 3_000 });
    set("slow");
    const key = fresh();
    const [first, second] = await Promise.all([send(key), sleep(50).then(() => send(key))]);
    expect([first.res.status, second.res.status]).toEqual([201, 201]);
    expect(second.res.headers.get("idempotency-replayed")).toBe("true");
    expect(second.text).toBe(first.text);
    expect(second.res.headers.get("set-cookie")).toBeNull();
    expect(runs).toHaveLength(1);
  });

  it("a 5xx or a throw stores nothing: the retry runs again; a body over maxBody → 409 after", async () => {
    const { runs, send, set } = setup({ maxBody: 50 });
    const key = fresh();
    set("fail");
    expect((await send(key)).res.status).toBe(502);
    set("throw");
    expect((await send(key)).res.status).toBe(500);
    set("ok");
    const ok = await send(key);
    expect(ok.res.status).toBe(201);
    expect((await send(key)).res.headers.get("idempotency-replayed")).toBe("true");
    expect(runs).toHaveLength(3);
    const big = fresh();
    set("big");
    expect((await send(big)).text).toHaveLength(100);
    const retry = await send(big);
    expect(retry.res.status).toBe(409);
    expect(problem(retry.text)).toMatchObject({ title: "Request already processed" });
    expect(runs).toHaveLength(4);
  });

  it("keys are scoped by caller: another Authorization runs its own request", async () => {
    const { runs, send } = setup();
    const key = fresh();
    const alice = { headers: { Authorization: "Bearer alice" } };
    const bob = { headers: { Authorization: "Bearer bob" } };
    const a = await send(key, alice);
    const b = await send(key, bob);
    expect(runs).toHaveLength(2);
    expect((await send(key, alice)).text).toBe(a.text);
    expect((await send(key, bob)).text).toBe(b.text);
    expect(runs).toHaveLength(2);
  });

  it("a majority of nodes down → 503, generic or (exposeDetails) naming the nodes, never their tokens; handler not run", async () => {
    const { runs, send } = setup({}, { requestTimeout: 300 });
    const exposed = setup({ exposeDetails: true }, { requestTimeout: 300 });
    await Promise.all([1, 2].map((i) => injectFault(i, { kind: "status", status: 502 })));
    const plain = await send(fresh());
    expect(plain.res.status).toBe(503);
    expect(problem(plain.text).detail).toBe(
      "Too few lock nodes answered to claim this Idempotency-Key; it did not run.",
    );
    const { res, text } = await exposed.send(fresh());
    expect(res.status).toBe(503);
    expect(problem(text).detail).toContain("node 1 (");
    for (const node of nodes) expect(text).not.toContain(node.token);
    expect(runs).toHaveLength(0);
    expect(exposed.runs).toHaveLength(0);
  });
});
