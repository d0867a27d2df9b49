/**
 * Which answers the Hono `idempotency()` middleware keeps, and how it replays them, against a
 * real 3-node dev cluster: bodiless statuses (204, 205, 304) replay as themselves; transient
 * answers (408, 409, 425, 429, `lock()`'s busy answer) are never kept, so a retry runs; `store`
 * overrides the rule; a request without a key gets the handler's own answer; a streamed body
 * (hono/streaming) is sent as it comes, with the claim held until it ends, and then kept.
 */
import { Hono } from "hono";
import { stream, streamText } from "hono/streaming";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { idempotency, lock } from "../../src/adapters/hono";
import { createLocks, isConfigurationError, type Lock } from "../../src/index";
import { readBack, resetCluster, sleep, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });

afterEach(() => resetCluster(dev.cluster));

const locksFor = (prefix: string) =>
  createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 300 });

const post = (app: Hono, path: string, key: string | undefined, body = "x") =>
  app.request(path, {
    method: "POST",
    body,
    headers: key === undefined ? {} : { "Idempotency-Key": key },
  });

describe("idempotency(): bodiless statuses replay", () => {
  it.each([204, 205, 304])("a stored %i replays with no body", async (status) => {
    const app = new Hono();
    let runs = 0;
    app.post("/x", idempotency({ locks: locksFor(uniquePrefix("idem-null")) }), (c) => {
      runs += 1;
      c.header("ETag", `"v${runs}"`);
      return c.body(null, status as 204);
    });
    const first = await post(app, "/x", '"k"');
    expect(first.status).toBe(status);
    for (let i = 0; i < 2; i++) {
      const replay = await post(app, "/x", '"k"');
      expect(replay.status).toBe(status);
      expect(replay.headers.get("idempotency-replayed")).toBe("true");
      expect(replay.headers.get("etag")).toBe('"v1"');
      expect(replay.body).toBeNull();
    }
    expect(runs).toBe(1);
  });
});

describe("idempotency(): transient answers are never kept", () => {
  it("outside lock(): the busy 409 is not replayed; the retry after Retry-After runs the charge", async () => {
    const prefix = uniquePrefix("idem-busy");
    const locks = locksFor(prefix);
    let charges = 0;
    const app = new Hono();
    app.post(
      "/invoices/:id/charge",
      idempotency({ locks }),
      lock({ locks, key: (c) => `invoice:${c.req.param("id")}` }),
      (c) => {
        charges += 1;
        return c.json({ charged: charges }, 201);
      },
    );
    // Another request holds the invoice's lock.
    const holder = await locks.acquire("invoice:7", { lease: 2_000 });
    const busy = await post(app, "/invoices/7/charge", '"pay-7"');
    expect(busy.status).toBe(409);
    expect(busy.headers.get("retry-after")).not.toBeNull();
    expect(((await busy.json()) as { type: string }).type).toBe("urn:edgelock:problem:lock-busy");
    await holder.release();
    const retry = await post(app, "/invoices/7/charge", '"pay-7"');
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotency-replayed")).toBeNull();
    expect(await retry.json()).toEqual({ charged: 1 });
    expect(charges).toBe(1);
    // That answer is kept: the next retry replays it.
    const again = await post(app, "/invoices/7/charge", '"pay-7"');
    expect([again.status, again.headers.get("idempotency-replayed")]).toEqual([201, "true"]);
    expect(charges).toBe(1);
  });

  it.each([408, 409, 425, 429])("a handler's %i is not kept: the retry runs", async (status) => {
    const app = new Hono();
    let runs = 0;
    app.post("/x", idempotency({ locks: locksFor(uniquePrefix("idem-transient")) }), (c) => {
      runs += 1;
      return c.text("later", runs === 1 ? (status as 409) : 200);
    });
    expect((await post(app, "/x", '"k"')).status).toBe(status);
    expect((await post(app, "/x", '"k"')).status).toBe(200);
    expect(runs).toBe(2);
  });

  it("store overrides the rule (here: keep successes only); it is validated", async () => {
    const app = new Hono();
    let runs = 0;
    const options = { store: (status: number) => status < 300 };
    app.post(
      "/x",
      idempotency({ locks: locksFor(uniquePrefix("idem-store")), ...options }),
      (c) => {
        runs += 1;
        return runs === 1 ? c.text("bad input", 400) : c.text("ok", 201);
      },
    );
    expect((await post(app, "/x", '"k"')).status).toBe(400);
    expect((await post(app, "/x", '"k"')).status).toBe(201);
    expect((await post(app, "/x", '"k"')).headers.get("idempotency-replayed")).toBe("true");
    expect(runs).toBe(2);
    const bad = (() => {
      try {
        idempotency({ locks: locksFor("x:"), store: [200] as unknown as () => boolean });
      } catch (error) {
        return error;
      }
    })();
    expect(isConfigurationError(bad)).toBe(true);
    expect((bad as Error).message).toContain("store");
  });
});

describe("idempotency(): requests without a key", () => {
  it("c.var.idempotencyClaim is typed Lock | undefined: using it unchecked does not compile", () => {
    const app = new Hono();
    app.post("/x", idempotency({ locks: locksFor("types:") }), (c) => {
      expectTypeOf(c.var.idempotencyClaim).toEqualTypeOf<Lock | undefined>();
      // @ts-expect-error -- undefined for a request without Idempotency-Key
      return c.json({ aborted: c.var.idempotencyClaim.signal.aborted });
    });
  });

  it("get the handler's answer; c.var.idempotencyClaim is undefined for them", async () => {
    const app = new Hono();
    const seen: boolean[] = [];
    app.post("/x", idempotency({ locks: locksFor(uniquePrefix("idem-nokey")) }), (c) => {
      // As the README's example: the claim's signal when there is one.
      const signal = c.var.idempotencyClaim?.signal;
      seen.push(signal === undefined);
      return c.json({ aborted: signal?.aborted ?? false }, 201);
    });
    const res = await post(app, "/x", undefined);
    expect([res.status, await res.json()]).toEqual([201, { aborted: false }]);
    await post(app, "/x", '"k"');
    expect(seen).toEqual([true, false]);
  });
});

describe("idempotency(): streamed bodies (hono/streaming)", () => {
  it("stream(): sent as it comes, the claim held until the end, then kept and replayed", async () => {
    const prefix = uniquePrefix("idem-stream");
    const app = new Hono();
    let runs = 0;
    const aborted: boolean[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    app.post(
      "/x",
      idempotency({ locks: locksFor(prefix), lease: 600, replayStreams: true }),
      (c) => {
        runs += 1;
        const claim = c.var.idempotencyClaim;
        return stream(c, async (s) => {
          await s.write(new TextEncoder().encode("part 1;"));
          await gate;
          aborted.push(claim?.signal.aborted ?? true);
          await s.write(new TextEncoder().encode("part 2"));
        });
      },
    );
    const first = await post(app, "/x", '"k"');
    expect(first.status).toBe(200);
    const reader = (first.body as ReadableStream<Uint8Array>).getReader();
    // The first part arrives while the handler is still writing.
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("part 1;");
    // Longer than the lease: the claim is auto-extended, and a duplicate finds it held.
    await sleep(900);
    const duplicate = await post(app, "/x", '"k"');
    expect(duplicate.status).toBe(409);
    const [key] = (await dev.direct(0).keys(`${prefix}idempotency:*`)).filter(
      (key) => !key.endsWith(":wait"),
    );
    expect((await readBack(dev, 3, key as string)).every((v) => /^[0-9a-f]{32}$/.test(v ?? "")));
    release();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toBe("part 2");
    expect(aborted).toEqual([false]);
    // The end came after the record was written: a retry at once is replayed.
    const replay = await post(app, "/x", '"k"');
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect(await replay.text()).toBe("part 1;part 2");
    expect(runs).toBe(1);
  });

  it("streamText() over maxBody: kept as completed without replay (a retry gets 409)", async () => {
    const app = new Hono();
    let runs = 0;
    app.post(
      "/x",
      idempotency({ locks: locksFor(uniquePrefix("idem-stream-big")), maxBody: 10 }),
      (c) => {
        runs += 1;
        return streamText(c, async (s) => {
          for (let i = 0; i < 5; i++) {
            await s.sleep(5);
            await s.write(`line ${i}\n`);
          }
        });
      },
    );
    const first = await post(app, "/x", '"k"');
    expect(await first.text()).toBe("line 0\nline 1\nline 2\nline 3\nline 4\n");
    const retry = await post(app, "/x", '"k"');
    expect(retry.status).toBe(409);
    expect(((await retry.json()) as { title: string }).title).toBe("Request already processed");
    expect(runs).toBe(1);
  });

  it("a stream the client cancels is kept as completed without replay, never run again", async () => {
    const app = new Hono();
    let runs = 0;
    app.post("/x", idempotency({ locks: locksFor(uniquePrefix("idem-stream-cancel")) }), (c) => {
      runs += 1;
      return stream(c, async (s) => {
        for (let i = 0; i < 100 && !s.aborted; i++) {
          await s.write(new TextEncoder().encode(`chunk ${i};`));
          await s.sleep(10);
        }
      });
    });
    const first = await post(app, "/x", '"k"');
    const reader = (first.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.cancel();
    let retry = await post(app, "/x", '"k"');
    for (let i = 0; i < 20 && retry.status === 409; i++) {
      const { title } = (await retry.json()) as { title: string };
      if (title === "Request already processed") break;
      await sleep(100);
      retry = await post(app, "/x", '"k"');
    }
    expect(retry.status).toBe(409);
    expect(runs).toBe(1);
  });
});
