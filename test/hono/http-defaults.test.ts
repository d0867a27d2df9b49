/**
 * What an HTTP client sees from the `lock()` middleware's default answers, in Node through
 * `app.request()` and on AWS Lambda through hono's `handle(app)`, against a real 3-node dev
 * cluster: a busy 409 says `Retry-After: 1` whatever the holder's lease (`retryAfter` sets it),
 * and a 503's `detail` names no node host nor lock state unless `exposeDetails: true`.
 */
import { Hono } from "hono";
import { handle } from "hono/aws-lambda";
import { afterEach, describe, expect, it } from "vitest";
import { budget, createLocks, type LockEvent, type Locks } from "../../src";
import { type LockOptions, lock } from "../../src/adapters/hono";
import { fakeContext, httpEventV2 } from "../lambda/helpers";
import { uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });

afterEach(() => {
  for (const control of dev.cluster.controls) control.clearFaults();
});

type Options = Omit<LockOptions, "locks" | "key">;

/** POST /r/:id under lock(`r:<id>`), with a manager whose lease is 10 s. */
function setup(options: Options = {}, shared?: Locks) {
  const events: LockEvent[] = [];
  const locks =
    shared ??
    createLocks({
      nodes: dev.cluster.nodes,
      prefix: uniquePrefix("lock-defaults"),
      lease: 10_000,
      // Faults answer at once; a generous timeout keeps a loaded machine from adding timeouts.
      requestTimeout: 2_000,
      onEvent: (e) => events.push(e),
    });
  const app = new Hono();
  app.post("/r/:id", lock({ locks, key: (c) => `r:${c.req.param("id")}`, ...options }), (c) =>
    c.text("ran"),
  );
  const node = (path: string) => app.request(path, { method: "POST" });
  const lambda = handle(app);
  const viaLambda = async (path: string) => {
    const result = await lambda(httpEventV2("POST", path), fakeContext(10_000));
    return {
      status: result.statusCode,
      headers: result.headers ?? {},
      body: JSON.parse(result.body) as { detail: string },
    };
  };
  return { locks, events, node, viaLambda };
}

const hosts = () => dev.cluster.nodes.map((n) => new URL(n.url).host);

describe("lock(): Retry-After of the busy answer", () => {
  it("is 1 s while the holder's auto-extended lease says 10 s (Node and Lambda)", async () => {
    const { locks, node, viaLambda } = setup();
    const holder = await locks.acquire("r:1", { autoExtend: true });
    try {
      const res = await node("/r/1");
      expect(res.status).toBe(409);
      expect(res.headers.get("retry-after")).toBe("1");
      const problem = (await res.json()) as { detail: string };
      expect(problem.detail).toBe(
        "Another request holds the lock for this resource; retry in 1 s.",
      );
      const aws = await viaLambda("/r/1");
      expect(aws.status).toBe(409);
      expect(aws.headers["retry-after"]).toBe("1");
    } finally {
      await holder.release();
    }
  });

  it("retryAfter sets it (ms, whole seconds rounded up); it is validated", async () => {
    const { locks, node } = setup({ retryAfter: 2_500 });
    const holder = await locks.acquire("r:2");
    try {
      expect((await node("/r/2")).headers.get("retry-after")).toBe("3");
    } finally {
      await holder.release();
    }
    expect(() => setup({ retryAfter: 0 })).toThrow(/retryAfter/);
  });
});

describe("lock(): 503 details", () => {
  it("generic by default (Node and Lambda); onEvent still gets every node's answer", async () => {
    const { node, viaLambda, events } = setup();
    for (const i of [1, 2]) dev.cluster.controls[i]?.inject({ kind: "status", status: 500 });
    const res = await node("/r/3");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    const problem = (await res.json()) as { type: string; detail: string };
    expect(problem).toMatchObject({
      type: "urn:edgelock:problem:lock-unavailable",
      detail: "Too few lock nodes answered to decide who holds the lock.",
    });
    const aws = await viaLambda("/r/3");
    expect([aws.status, aws.body.detail]).toEqual([
      503,
      "Too few lock nodes answered to decide who holds the lock.",
    ]);
    for (const host of hosts()) expect(JSON.stringify(aws.body)).not.toContain(host);
    const failed = events.find((e) => e.type === "acquire" && e.result === "unavailable");
    expect(
      failed?.type === "acquire" && failed.outcomes.filter((o) => o.status === "error"),
    ).toHaveLength(2);
  });

  it("a node held by another caller: no lock state in the body unless exposeDetails", async () => {
    const plain = setup();
    const exposed = setup({ exposeDetails: true }, plain.locks);
    // Another caller holds the key; then nodes 1 and 2 fail: node 0's hold alone cannot rule
    // out a majority, so this is a QuorumError whose message tells the hold.
    const holder = await plain.locks.acquire("r:4");
    for (const i of [1, 2]) dev.cluster.controls[i]?.inject({ kind: "status", status: 500 });
    try {
      const res = await plain.node("/r/4");
      expect(res.status).toBe(503);
      const generic = (await res.json()) as { detail: string };
      expect(generic.detail).toBe("Too few lock nodes answered to decide who holds the lock.");
      const detailed = (await (await exposed.node("/r/4")).json()) as { detail: string };
      // Node 0 answers "held by another caller" when its answer came before the two failures
      // decided the round, "no answer yet" otherwise.
      expect(detailed.detail).toContain(`lock "r:4": no majority`);
      expect(detailed.detail).toContain(`node 0 (${hosts()[0]}): `);
      expect(detailed.detail).toContain(`node 1 (${hosts()[1]})`);
    } finally {
      for (const control of dev.cluster.controls) control.clearFaults();
      await holder.release();
    }
  });

  it("an exhausted budget: generic by default, its numbers with exposeDetails", async () => {
    const none = () => budget.within(0);
    const plain = await setup({ budget: none }).node("/r/5");
    expect(plain.status).toBe(503);
    expect(((await plain.json()) as { detail: string }).detail).toBe(
      "This invocation has too little time or too few subrequests left to take the lock.",
    );
    const exposed = await setup({ budget: none, exposeDetails: true }).node("/r/5");
    expect(((await exposed.json()) as { detail: string }).detail).toMatch(
      /take the lock \(.+\)\.$/,
    );
  });
});
