/**
 * No rejection left unhandled in Node when a lock layer's nodes answer nothing (docs/SAFETY.md
 * §6c): contract C12 (`idempotency()` over a `lock()` whose nodes are closed ports, and the same
 * on Lambda) run through its own glue, under a `process.on("unhandledRejection")` listener, with
 * hono on Node without an execution context and with one (`waitUntil` collected and awaited, as
 * workerd does), then a failed `acquire` and a bare `lock()` on those nodes. Each test waits twice
 * the unreachable nodes' request timeout after its invocations, so background work (failed
 * rounds' discards, releases handed to `waitUntil`) has settled before the count is read. The
 * workerd side is `test/miniflare/unhandled.test.ts`.
 */
import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { lock } from "../../src/adapters/hono";
import { sleep } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";
import { CASES } from "./cases";
import { ContractCluster } from "./harness";
import { honoIdempotency, lambdaWithIdempotency, type Runtime } from "./surfaces";

const dev = useDevCluster({ nodes: 3 });
let cluster: ContractCluster | undefined;
const clusterOf = () => (cluster ??= new ContractCluster(dev.cluster.nodes));
/** `ContractCluster.unreachable()`'s request timeout, twice: its background work has settled. */
const SETTLE_MS = 2 * 500;

const plain: Runtime = {
  name: "node",
  async honoCall(app, request) {
    const res = await app.request(request);
    await res.arrayBuffer();
    return res;
  },
  scheduled: () => Promise.reject(new Error("no scheduled surface here")),
};

/** hono on Node handed a Workers-shaped `ExecutionContext`: its `waitUntil` work is awaited. */
const withContext: Runtime = {
  name: "node with an ExecutionContext",
  async honoCall(app, request) {
    const pending: Promise<unknown>[] = [];
    const ctx = {
      waitUntil: (p: Promise<unknown>) => void pending.push(p),
      passThroughOnException: () => undefined,
      props: {},
    };
    const res = await app.fetch(request, {}, ctx);
    await res.arrayBuffer();
    await Promise.allSettled(pending);
    return res;
  },
  scheduled: plain.scheduled,
};

const unhandled: unknown[] = [];
const listener = (reason: unknown) => void unhandled.push(reason);
beforeEach(() => {
  unhandled.length = 0;
  process.on("unhandledRejection", listener);
});
afterEach(() => {
  process.off("unhandledRejection", listener);
});

const C12 = CASES.find((c) => c.id === "C12");
if (C12 === undefined) throw new Error("contract case C12 is gone");

describe("Node: no unhandled rejection when a lock layer's nodes are unreachable", () => {
  for (const surface of [
    honoIdempotency(plain),
    honoIdempotency(withContext),
    lambdaWithIdempotency(),
  ]) {
    it(`C12 on ${surface.name}`, async () => {
      await C12.run(surface, clusterOf());
      await sleep(SETTLE_MS);
      expect(unhandled).toEqual([]);
    });
  }

  it("a failed acquire, and lock() answering 503, with and without an ExecutionContext", async () => {
    const down = clusterOf().unreachable();
    await expect(down.acquire("k", { wait: 0 })).rejects.toMatchObject({ name: "QuorumError" });
    const app = new Hono();
    app.post("/", lock({ locks: down, key: () => "k", onUnavailable: () => undefined }), (c) =>
      c.text("ran"),
    );
    for (const runtime of [plain, withContext]) {
      const res = await runtime.honoCall(app, new Request("https://app.test/", { method: "POST" }));
      expect(res.status).toBe(503);
    }
    await sleep(SETTLE_MS);
    expect(unhandled).toEqual([]);
  });
});
