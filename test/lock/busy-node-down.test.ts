/**
 * A busy key with one of three nodes down (docs/SAFETY.md §6 "What a caller is told, and when it
 * stops"; README: a busy key is a `LockBusyError` — Hono 409, never a 503 while a majority
 * answers in time). A node that fails at once decides a round before the second holder answers;
 * the caller that gives up waits for that answer (one request timeout at most) and reports the
 * key busy (without that wait: `QuorumError` 6 of 6 with `wait`, 2–4 of 10 without, 503s from
 * `lock()`). Every surface that promises it: `acquire` with and without `wait`
 * (the queue's give-up and the first look's), `tryAcquire`, `using`, Hono `lock()`, Lambda
 * `withLock`, and a node killed rather than failing.
 */
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { lock } from "../../src/adapters/hono/index";
import { withLock } from "../../src/adapters/lambda/index";
import { createLocks, type Locks } from "../../src/index";
import { fakeContext } from "../lambda/helpers";
import { useDevCluster } from "../support/dev-cluster";
import { resetCluster, uniquePrefix } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });
afterEach(() => resetCluster(dev.cluster));

const make = (prefix: string): Locks =>
  createLocks({ nodes: dev.cluster.nodes, prefix, lease: 8_000, retryDelayMax: 200 });

/** The error's class name, or what a call returned instead. */
const nameOf = (call: Promise<unknown>): Promise<string> =>
  call.then(
    (value) => (value === null ? "null" : "granted"),
    (error: unknown) => (error as Error).name,
  );

describe("a busy key with one node of three down", () => {
  it("acquire (with and without wait), tryAcquire and using report it busy, never an outage", async () => {
    const prefix = uniquePrefix("busy-down");
    const holder = await make(prefix).acquire("k");
    dev.cluster.controls[2]?.inject({ kind: "status", status: 503 });
    const waited = [];
    for (let i = 0; i < 4; i++) waited.push(await nameOf(make(prefix).acquire("k", { wait: 300 })));
    const once = [];
    for (let i = 0; i < 6; i++) once.push(await nameOf(make(prefix).acquire("k")));
    const tried = [];
    const trier = make(prefix);
    for (let i = 0; i < 6; i++) tried.push(await nameOf(trier.tryAcquire("k")));
    const used = await nameOf(make(prefix).using("k", async () => "ran", { wait: 300 }));
    await holder.release();
    expect(waited).toEqual(Array(4).fill("LockBusyError"));
    expect(once).toEqual(Array(6).fill("LockBusyError"));
    expect(tried).toEqual(Array(6).fill("null"));
    expect(used).toBe("LockBusyError");
  });

  it("Hono lock() answers 409, with and without wait; Lambda withLock calls onBusy", async () => {
    const prefix = uniquePrefix("busy-down-adapters");
    const locks = make(prefix);
    const holder = await make(prefix).acquire("invoice:1");
    dev.cluster.controls[2]?.inject({ kind: "status", status: 503 });
    const statuses: number[] = [];
    for (const wait of [0, 300]) {
      const app = new Hono();
      app.post(
        "/i/:id",
        lock({ locks, wait, key: (c) => `invoice:${c.req.param("id")}`, onUnavailable: () => {} }),
        (c) => c.text("ok"),
      );
      for (let i = 0; i < 3; i++) {
        statuses.push((await app.request("/i/1", { method: "POST" })).status);
      }
    }
    const handler = withLock(async () => ({ statusCode: 200 }), {
      locks,
      key: () => "invoice:1",
      wait: 300,
      onBusy: () => ({ statusCode: 409 }),
    });
    const lambda = [];
    for (let i = 0; i < 3; i++) lambda.push((await handler({}, fakeContext(10_000))).statusCode);
    await holder.release();
    expect(statuses).toEqual(Array(6).fill(409));
    expect(lambda).toEqual([409, 409, 409]);
  });

  it("with the node's redis-server killed, waiting callers of other instances are told busy", async () => {
    const prefix = uniquePrefix("busy-killed");
    const holder = await make(prefix).acquire("k");
    await dev.cluster.controls[2]?.kill();
    const names = [];
    try {
      for (let i = 0; i < 3; i++)
        names.push(await nameOf(make(prefix).acquire("k", { wait: 300 })));
    } finally {
      await holder.release();
      await dev.cluster.controls[2]?.restart();
    }
    expect(names).toEqual(Array(3).fill("LockBusyError"));
  });
});
