import { Redis } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { isLockLostError, isQuorumError, LockLostError, type QuorumError } from "../../src/errors";
import { createLocks } from "../../src/index";
import { SCRIPTS } from "../../src/scripts";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, readBack, requests, resetCluster, sleep, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 3 });

describe("scripts on a real node", () => {
  it("SCRIPT LOAD returns each SHA-1 literal", async () => {
    for (const script of SCRIPTS) {
      expect(await dev.direct(0).script("LOAD", script.lua)).toBe(script.sha1);
    }
  });
});

describe("cost", () => {
  it.each([1, 3])("uncontended acquire + release costs exactly 2N requests (N=%i)", async (n) => {
    const { cluster } = dev;
    const locks = createLocks({ nodes: cluster.nodes.slice(0, n), prefix: uniquePrefix("cost") });
    // Rounds resolve at a majority: a node still answering the acquire gets its release once
    // that acquire answered, so the last requests may arrive just after release() resolved.
    const exactly = async (count: number) => {
      await eventually(() => requests(cluster) >= count);
      await sleep(50);
      expect(requests(cluster)).toBe(count);
    };
    resetCluster(cluster);
    // cold: the first call per node sends EVAL (which loads the script), still one request
    await (await locks.acquire("cold")).release();
    await exactly(2 * n);
    resetCluster(cluster);
    const lock = await locks.acquire("warm");
    await exactly(n);
    await lock.release();
    await exactly(2 * n);
  });
});

describe("faults", () => {
  it.each(["reset-after", "reset-before"] as const)(
    "%s on every node: acquire still succeeds (idempotent retry), release works",
    async (kind) => {
      const { cluster } = dev;
      resetCluster(cluster);
      const prefix = uniquePrefix(kind);
      const locks = createLocks({ nodes: cluster.nodes, prefix });
      await (await locks.acquire("warm")).release();
      // The warm-up release is decided by a majority: its last request must land before counting.
      await eventually(async () => (await readBack(dev, 3, `${prefix}warm`)).every((v) => !v));
      resetCluster(cluster);
      for (const control of cluster.controls) control.inject({ kind, count: 1 });
      const lock = await locks.acquire("k");
      // each node saw the reset request and one retry (the third may answer after the majority)
      await eventually(() => cluster.controls.every((c) => c.stats().requests === 2));
      expect(await readBack(dev, 3, `${prefix}k`)).toEqual([lock.token, lock.token, lock.token]);
      for (const control of cluster.controls) expect(control.stats().requests).toBe(2);
      expect((await lock.release()).status).toBe("released");
      await eventually(async () => (await readBack(dev, 3, `${prefix}k`)).every((v) => v === null));
      // the same fault on the release: it is re-sent and still reported as a release
      const again = await locks.acquire("k2");
      for (const control of cluster.controls) control.inject({ kind, count: 1 });
      expect((await again.release()).status).toBe("released");
      await eventually(async () =>
        (await readBack(dev, 3, `${prefix}k2`)).every((v) => v === null),
      );
    },
  );

  it("NOSCRIPT: one EVAL fallback, then EVALSHA again", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const prefix = uniquePrefix("noscript");
    const locks = createLocks({ nodes: cluster.nodes, prefix });
    await (await locks.acquire("warm")).release();
    // Releases are decided by a majority: let each one's last request land before counting.
    const gone = (key: string) =>
      eventually(async () => (await readBack(dev, 3, `${prefix}${key}`)).every((v) => !v));
    await gone("warm");
    resetCluster(cluster);
    for (const control of cluster.controls) control.inject({ kind: "noscript", count: 1 });
    const lock = await locks.acquire("k");
    await lock.release();
    await gone("k");
    for (const control of cluster.controls) {
      expect(control.stats().commands).toEqual({ evalsha: 2, eval: 1 });
    }
  });

  it("a hanging node is reported as a timeout, never as a fake result", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const locks = createLocks({
      nodes: cluster.nodes.slice(0, 1),
      prefix: uniquePrefix("hang"),
      requestTimeout: 150,
    });
    cluster.controls[0]?.inject({ kind: "hang" });
    const error = (await locks.acquire("k").catch((e: unknown) => e)) as QuorumError;
    expect(isQuorumError(error)).toBe(true);
    expect(error.outcomes[0]?.status).toBe("timeout");
    expect(error.outcomes[0]?.error?.kind).toBe("timeout");
    expect(error.outcomes[0]?.error?.node).toBe(0);
    resetCluster(cluster);
  });

  it("a user-supplied client (auto-pipelining, default retries) works and is timed out by racing", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const clients = cluster.nodes.map((n) => new Redis({ url: n.url, token: n.token }));
    const prefix = uniquePrefix("user");
    const locks = createLocks({ nodes: clients, prefix, requestTimeout: 150 });
    const lock = await locks.acquire("k");
    expect(await readBack(dev, 3, `${prefix}k`)).toEqual([lock.token, lock.token, lock.token]);
    expect((await lock.release()).status).toBe("released");
    // the host is read from the client
    cluster.controls[1]?.inject({ kind: "hang" });
    cluster.controls[2]?.inject({ kind: "hang" });
    const error = (await locks.acquire("j").catch((e: unknown) => e)) as QuorumError;
    expect(isQuorumError(error)).toBe(true);
    const hung = error.outcomes.filter((o) => o.status === "timeout");
    expect(hung.map((o) => o.index).sort()).toEqual([1, 2]);
    expect(hung[0]?.host).toBe(new URL(cluster.nodes[hung[0]?.index ?? 0]?.url ?? "").host);
    resetCluster(cluster);
  });

  it("transport errors name the node and never carry a token", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const locks = createLocks({ nodes: cluster.nodes, prefix: uniquePrefix("errors") });
    cluster.controls[0]?.inject({ kind: "status", status: 500 });
    cluster.controls[1]?.inject({ kind: "status", status: 502, body: "<html>bad gateway</html>" });
    const error = (await locks.acquire("k").catch((e: unknown) => e)) as QuorumError;
    expect(isQuorumError(error)).toBe(true);
    const [first, second] = error.outcomes;
    expect([first?.error?.kind, second?.error?.kind]).toEqual(["server", "reply"]);
    expect(first?.error?.message).toMatch(/^node 0 \(127\.0\.0\.1:\d+\): /);
    const everything = JSON.stringify(error, (_, v) =>
      v instanceof Error ? { message: v.message, cause: v.cause } : v,
    );
    for (const node of cluster.nodes) expect(everything).not.toContain(node.token);
    expect(everything).not.toMatch(/[0-9a-f]{32}/); // no lock token
    resetCluster(cluster);
  });
});

describe("expiry", () => {
  it("extend after expiry fails with LockLostError, calls no node, and leaves no key", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const prefix = uniquePrefix("expired-extend");
    const locks = createLocks({ nodes: cluster.nodes, prefix, lease: 200, requestTimeout: 150 });
    const lock = await locks.acquire("k");
    await sleep(260);
    expect(lock.signal.aborted).toBe(true);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    const before = requests(cluster);
    await expect(lock.extend()).rejects.toBeInstanceOf(LockLostError);
    expect(requests(cluster)).toBe(before);
    expect(await readBack(dev, 3, `${prefix}k`)).toEqual([null, null, null]);
  });

  it("extend never resurrects a key deleted on the nodes", async () => {
    const { cluster } = dev;
    resetCluster(cluster);
    const prefix = uniquePrefix("gone-extend");
    const locks = createLocks({ nodes: cluster.nodes, prefix, lease: 5_000 });
    const lock = await locks.acquire("k");
    expect((await locks.forceRelease("k")).deleted).toBe(3);
    const error = await lock.extend().catch((e: unknown) => e);
    expect(isLockLostError(error)).toBe(true);
    expect(lock.signal.aborted).toBe(true);
    expect(await readBack(dev, 3, `${prefix}k`)).toEqual([null, null, null]);
    expect((await lock.release()).status).toBe("expired");
  });

  it("release after expiry reports it, once per node, without retries", async () => {
    const { cluster } = dev;
    const locks = createLocks({
      nodes: cluster.nodes,
      prefix: uniquePrefix("expired"),
      lease: 150,
    });
    const lock = await locks.acquire("k");
    await sleep(220);
    resetCluster(cluster);
    const result = await lock.release();
    expect(result.status).toBe("expired");
    expect(result.outcomes.filter((o) => o.status === "absent").length).toBeGreaterThanOrEqual(2);
    await sleep(50);
    for (const control of cluster.controls) expect(control.stats().requests).toBe(1);
    expect(await lock.release()).toBe(result);
  });
});

describe("inspect", () => {
  it("reports holder presence, PTTL and fence per node", async () => {
    const prefix = uniquePrefix("inspect");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, fencing: true, lease: 3_000 });
    expect((await locks.inspect("k")).held).toBe(false);
    const lock = await locks.acquire("k");
    const seen = await locks.inspect("k");
    expect(seen.held).toBe(true);
    expect(seen.fence).toBe(lock.fence);
    expect(seen.retryAfter).toBeGreaterThan(2_000);
    for (const node of seen.nodes) {
      expect(node.status).toBe("held");
      expect(node.pttl).toBeGreaterThan(2_000);
      expect(JSON.stringify(node)).not.toContain(lock.token);
    }
    await lock.release();
    expect((await locks.inspect("k")).nodes.map((n) => n.status)).toEqual([
      "absent",
      "absent",
      "absent",
    ]);
  });
});
