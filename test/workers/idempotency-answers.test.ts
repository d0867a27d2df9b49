/**
 * `idempotency()` inside workerd with a real `ExecutionContext`: bodiless statuses replay as
 * themselves (the Fetch API refuses a body for them), transient answers are not kept, a request
 * without a key gets the handler's answer, and a streamed body (hono/streaming) reaches the client
 * as it is written while the claim is held, then is kept for replay.
 */
import { Hono } from "hono";
import { stream } from "hono/streaming";
import { afterEach, describe, expect, it } from "vitest";
import { idempotency } from "../../src/adapters/hono";
import { call, healAll, testLocks } from "./support/cluster";

afterEach(healAll);

const fresh = () => `"${crypto.randomUUID()}"`;

/** One POST; resolves with the response once its `waitUntil` work is done too. */
async function post(app: Hono, key: string | undefined) {
  const headers = new Headers();
  if (key !== undefined) headers.set("Idempotency-Key", key);
  const { response, settled } = call(app, "/x", { method: "POST", body: "b", headers });
  const res = await response;
  const text = res.body === null ? null : await res.text();
  await settled;
  return { res, text };
}

describe("idempotency() inside workerd: which answers are kept, and how", () => {
  it.each([204, 205, 304])("a stored %i replays with no body", async (status) => {
    const { locks } = testLocks({ requestTimeout: 1_000 });
    let runs = 0;
    const app = new Hono();
    app.post("/x", idempotency({ locks }), (c) => {
      runs += 1;
      return c.body(null, status as 204);
    });
    const key = fresh();
    expect((await post(app, key)).res.status).toBe(status);
    const replay = await post(app, key);
    expect([replay.res.status, replay.res.headers.get("idempotency-replayed")]).toEqual([
      status,
      "true",
    ]);
    expect(replay.text).toBeNull();
    expect(runs).toBe(1);
  });

  it("a 429 is not kept; a request without a key gets the handler's answer", async () => {
    const { locks } = testLocks({ requestTimeout: 1_000 });
    let runs = 0;
    const app = new Hono();
    app.post("/x", idempotency({ locks }), (c) => {
      runs += 1;
      const aborted = c.var.idempotencyClaim?.signal.aborted ?? false;
      return c.json({ runs, aborted }, runs === 1 ? 429 : 201);
    });
    const key = fresh();
    expect((await post(app, key)).res.status).toBe(429);
    expect((await post(app, key)).res.status).toBe(201);
    const none = await post(app, undefined);
    expect([none.res.status, JSON.parse(none.text ?? "")]).toEqual([
      201,
      { runs: 3, aborted: false },
    ]);
  });

  it("stream() with replayStreams: the first part arrives before the handler finished; the whole body is kept", async () => {
    const { locks } = testLocks({ requestTimeout: 1_000 });
    let runs = 0;
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const app = new Hono();
    app.post("/x", idempotency({ locks, replayStreams: true }), (c) => {
      runs += 1;
      return stream(c, async (s) => {
        await s.write("part 1;");
        await gate;
        await s.write("part 2");
      });
    });
    const key = fresh();
    const { response, settled } = call(app, "/x", {
      method: "POST",
      body: "b",
      headers: { "Idempotency-Key": key },
    });
    const res = await response;
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("part 1;");
    open();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    await settled;
    expect(rest).toBe("part 2");
    const replay = await post(app, key);
    expect([replay.res.headers.get("idempotency-replayed"), replay.text]).toEqual([
      "true",
      "part 1;part 2",
    ]);
    expect(runs).toBe(1);
  });

  it("stream() whose callback throws part-way: kept without replay, the retry gets 409", async () => {
    const { locks } = testLocks({ requestTimeout: 1_000 });
    let runs = 0;
    const app = new Hono();
    app.post("/x", idempotency({ locks }), (c) => {
      runs += 1;
      return stream(
        c,
        async (s) => {
          await s.write("part 1;");
          await s.sleep(20);
          throw new Error("boom");
        },
        async () => undefined,
      );
    });
    const key = fresh();
    const { response, settled } = call(app, "/x", {
      method: "POST",
      body: "b",
      headers: { "Idempotency-Key": key },
    });
    expect(await (await response).text()).toBe("part 1;");
    await settled;
    const retry = await post(app, key);
    expect(retry.res.status).toBe(409);
    expect(JSON.parse(retry.text ?? "").title).toBe("Request already processed");
    expect(runs).toBe(1);
  });
});
