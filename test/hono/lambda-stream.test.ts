/**
 * `lock()` under hono's `streamHandle` (AWS Lambda response streaming), with a fake of the two
 * `awslambda` globals it uses, against a real 3-node dev cluster. A body streamed to its end is
 * released before the invocation returns. A client that goes away mid-stream is the documented
 * limit: hono's pipeline stops reading the body without cancelling it, so the producer is not told
 * and nothing releases the key; what bounds it is the budget — the lock's TTL never reaches past
 * the invocation's deadline plus the budget's margin, and in a live process auto-extension stops
 * before the deadline (a frozen container extends nothing: the key lasts at most one TTL).
 */
import { Writable } from "node:stream";
import { Hono } from "hono";
import { streamHandle } from "hono/aws-lambda";
import { stream } from "hono/streaming";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocks, type Lock } from "../../src";
import { lock } from "../../src/adapters/hono";
import { DEFAULT_MARGIN } from "../../src/budget/budget";
import { fakeContext, httpEventV2 } from "../lambda/helpers";
import { eventually, pttlBack, readBack, resetCluster } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });
const N = 3;
/** The fake invocation's remaining time when it starts, ms. */
const BUDGET = 2_000;

type Global = { awslambda?: unknown };
beforeAll(() => {
  (globalThis as Global).awslambda = {
    streamifyResponse: (fn: unknown) => fn,
    HttpResponseStream: { from: (s: unknown) => s },
  };
});
afterAll(() => {
  delete (globalThis as Global).awslambda;
});

type Invoke = (event: unknown, stream: Writable, context: unknown) => Promise<void>;

function setup(lease: number) {
  resetCluster(dev.cluster);
  const prefix = `t:lambda-stream:${crypto.randomUUID()}:`;
  const locks = createLocks({ nodes: dev.cluster.nodes, prefix, lease });
  const seen = { lock: undefined as Lock | undefined, aborts: 0, writes: 0 };
  const app = new Hono();
  app.get("/s", lock({ locks, key: () => "k" }), (c) => {
    seen.lock = c.var.lock;
    const { signal } = c.var.lock;
    return stream(c, async (s) => {
      s.onAbort(() => {
        seen.aborts++;
      });
      for (let i = 0; i < 5 || c.req.query("forever") !== undefined; i++) {
        if (signal.aborted || s.aborted) return;
        await s.write(`c${i};`);
        seen.writes++;
        await s.sleep(10);
      }
    });
  });
  const invoke = streamHandle(app) as unknown as Invoke;
  return { invoke, seen, values: () => readBack(dev, N, `${prefix}k`), prefix };
}

describe("lock() under hono's streamHandle", () => {
  it("a body streamed to its end: the key is released before the invocation returns", async () => {
    const { invoke, values } = setup(3_000);
    const chunks: string[] = [];
    const out = new Writable({
      write(chunk, _encoding, callback) {
        chunks.push(String(chunk));
        callback();
      },
    });
    await invoke(httpEventV2("GET", "/s"), out, fakeContext(20_000));
    expect(chunks.join("")).toBe("c0;c1;c2;c3;c4;");
    expect(await values()).toEqual([null, null, null]);
  });

  it("a client gone mid-stream: not released at return, bounded by the budget (deadline + margin)", async () => {
    const lease = 10_000;
    const { invoke, seen, values, prefix } = setup(lease);
    let written = 0;
    const out = new Writable({
      write(_chunk, _encoding, callback) {
        callback(written++ >= 1 ? new Error("client went away") : null);
      },
    });
    const context = fakeContext(BUDGET); // far below the lease: only the budget can bound the hold
    const quiet = console.error; // hono logs the pipeline's failure
    console.error = () => undefined;
    try {
      await invoke(
        { ...httpEventV2("GET", "/s"), rawQueryString: "forever=1" },
        out,
        context,
      ).catch(() => undefined);
    } finally {
      console.error = quiet;
    }
    // The invocation returned; hono never cancelled the body, so the producer was not told.
    const token = seen.lock?.token;
    expect(await values()).toEqual([token, token, token]);
    expect(seen.aborts).toBe(0);
    // What a frozen container would leave: a TTL within the invocation's budget plus the margin
    // (set from the remaining time at each extension), far below the lease.
    for (const pttl of await pttlBack(dev, N, `${prefix}k`)) {
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(BUDGET + DEFAULT_MARGIN);
    }
    // Live here, auto-extension stops at the budget: the signal says so and the key runs out.
    await eventually(() => seen.lock?.signal.aborted === true, 5_000);
    expect(seen.lock?.signal.reason).toMatchObject({ name: "LockLostError" });
    await eventually(async () => (await values()).every((v) => v === null), 5_000);
  });
});
