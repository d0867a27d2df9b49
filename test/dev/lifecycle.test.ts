// Process-level faults: pause/resume (SIGSTOP/SIGCONT), kill, restart with and without data,
// delayed restart — observed through @upstash/redis and direct connections.
import { errors } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { DevClusterError } from "../../src/dev/index";
import { uniqueKey, useDevCluster } from "../support/dev-cluster";
import { redisServerPid } from "../support/processes";

const aof = useDevCluster({ nodes: 2, persistence: "aof" });
const volatile = useDevCluster({ nodes: 1 });

const control = (fixture: typeof aof, i = 0) => {
  const node = fixture.cluster.controls[i];
  if (node === undefined) throw new Error(`no node ${i}`);
  return node;
};

describe("pause and resume", () => {
  it("stalls requests while paused and completes them after resume", async () => {
    const node = control(aof, 1);
    const key = uniqueKey("pause");
    node.pause();
    const outcome: string[] = [];
    const write = aof
      .client(1)
      .set(key, "v")
      .then((r) => outcome.push(String(r)));
    const tx = aof.client(1).multi().incr(`${key}:n`).exec();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(outcome).toEqual([]); // stalled, neither answered nor failed
    node.resume();
    await write;
    expect(outcome).toEqual(["OK"]);
    expect(await tx).toEqual([1]);
  });

  it("does not pause a node that is not running", async () => {
    const node = control(aof, 1);
    node.resume(); // no-op when not paused
    await node.kill();
    expect(() => node.pause()).toThrow(DevClusterError);
    expect(() => node.pause()).toThrow(/node 1 \(127\.0\.0\.1:\d+\)/);
    await node.restart();
  });
});

describe("kill and restart", () => {
  it("answers 5xx JSON at once after a kill, and works again after restart (AOF keeps data)", async () => {
    const node = control(aof);
    const key = uniqueKey("aof");
    const redis = aof.client(0, { retry: false, signal: () => AbortSignal.timeout(5_000) });
    await redis.set(key, "durable");
    const pidBefore = await redisServerPid(node.redisUrl);
    await node.kill();
    const error = await redis.get(key).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.UpstashError);
    expect((error as Error).message).toMatch(/node 0 .*redis-server unavailable/);
    const raw = await fetch(node.url, {
      method: "POST",
      headers: { authorization: `Bearer ${node.token}` },
      body: '["ping"]',
    });
    expect(raw.status).toBe(503);
    expect(await raw.json()).toMatchObject({ error: /unavailable/ });
    // Transactions fail the same way, without hanging.
    await expect(redis.multi().get(key).exec()).rejects.toBeInstanceOf(errors.UpstashError);
    await node.restart(); // default keepData with AOF: true
    expect(await redisServerPid(node.redisUrl)).not.toBe(pidBefore);
    expect(await redis.get(key)).toBe("durable");
  });

  it("restart({ keepData: false }) starts empty even with AOF", async () => {
    const node = control(aof);
    const key = uniqueKey("wipe");
    await aof.client(0).set(key, "v");
    await node.restart({ keepData: false });
    expect(await aof.client(0).get(key)).toBeNull();
    expect(await aof.client(0).dbsize()).toBe(0);
  });

  it("without persistence a restart loses every key, and keepData is refused", async () => {
    const node = control(volatile);
    const key = uniqueKey("volatile");
    await volatile.client(0).set(key, "v");
    await expect(node.restart({ keepData: true })).rejects.toThrow(/persistence: "aof"/);
    await node.restart();
    expect(await volatile.client(0).exists(key)).toBe(0);
  });

  it("restart({ delayMs }) keeps the node down (503) for the delay", async () => {
    const node = control(volatile);
    const redis = volatile.client(0, { retry: false, enableAutoPipelining: false });
    const t0 = performance.now();
    const restarting = node.restart({ delayMs: 600 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    await expect(redis.ping()).rejects.toThrow(/unavailable/);
    await restarting;
    expect(performance.now() - t0).toBeGreaterThanOrEqual(600);
    expect(await redis.ping()).toBe("PONG");
  });

  it("restarts over the admin route and answers once the node is back", async () => {
    const node = control(volatile);
    const res = await fetch(`${node.url}/__edgelock/restart`, {
      method: "POST",
      headers: { authorization: `Bearer ${node.token}` },
      body: JSON.stringify({ delayMs: 50 }),
    });
    expect(res.status).toBe(200);
    expect(await volatile.client(0).ping()).toBe("PONG");
    const refused = await fetch(`${node.url}/__edgelock/restart`, {
      method: "POST",
      headers: { authorization: `Bearer ${node.token}` },
      body: JSON.stringify({ keepData: true }),
    });
    expect(refused.status).toBe(400);
  });
});
