/**
 * `await using lock = await locks.acquire(…)` (TypeScript's explicit resource management, lowered
 * by the test transform for Node 20) against a real dev cluster: the scope's end releases the
 * lock on the nodes, a scope's error is never masked, and a lock already released, handed on or
 * completed disposes without a request.
 */
import { describe, expect, it } from "vitest";
import { isLockEndedError } from "../../src/errors";
import { createLocks, type LockEvent } from "../../src/index";
import { complete } from "../../src/lock/handle";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, readBack, requests, resetCluster, sleep, uniquePrefix } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });

function setup(name: string) {
  resetCluster(dev.cluster);
  const prefix = uniquePrefix(`dispose-${name}`);
  const events: LockEvent[] = [];
  const locks = createLocks({
    nodes: dev.cluster.nodes,
    prefix,
    lease: 5_000,
    requestTimeout: 1_500, // a loaded machine may answer later than the default 250 ms
    onEvent: (event) => events.push(event),
  });
  return { locks, events, full: `${prefix}k` };
}

/** Every node holds `value` at `key` (a round is decided at a majority; the rest land after). */
const onEveryNode = (key: string, value: string | null) =>
  eventually(async () => (await readBack(dev, N, key)).every((v) => v === value));

describe("await using", () => {
  it("releases the lock at the end of the scope", async () => {
    const { locks, events, full } = setup("scope");
    let signal: AbortSignal | undefined;
    {
      await using lock = await locks.acquire("k");
      signal = lock.signal;
      await onEveryNode(full, lock.token);
      expect(signal.aborted).toBe(false);
    }
    expect(signal.aborted).toBe(true);
    expect(isLockEndedError(signal.reason) && signal.reason.how).toBe("released");
    expect(events.filter((e) => e.type === "release")).toMatchObject([{ result: "released" }]);
    await onEveryNode(full, null);
  });

  it("a scope's error propagates, unmasked, even when the release fails on every node", async () => {
    const { locks, events, full } = setup("error");
    const mine = new Error("scope failed");
    let token = "";
    const run = async () => {
      await using lock = await locks.acquire("k");
      token = lock.token;
      await onEveryNode(full, token);
      for (const control of dev.cluster.controls) control.inject({ kind: "status", status: 500 });
      throw mine;
    };
    await expect(run()).rejects.toBe(mine);
    expect(events.filter((e) => e.type === "release")).toMatchObject([{ result: "unknown" }]);
    resetCluster(dev.cluster);
    // Nothing deleted it: the key stays until its TTL (as after any failed release).
    expect(await readBack(dev, N, full)).toEqual([token, token, token]);
  });

  it("a released, handed-on or completed lock disposes without a request", async () => {
    const { locks, events, full } = setup("ended");
    const ended = [
      async () => {
        await using lock = await locks.acquire("k");
        await lock.release();
        return lock.token;
      },
      async () => {
        await using lock = await locks.acquire("k");
        await lock.ticket();
        return lock.token;
      },
      async () => {
        await using lock = await locks.acquire("k");
        await complete(lock, 60_000);
        return lock.token;
      },
    ];
    const left: (string | null)[] = [null, "token", "done"];
    for (const [i, scope] of ended.entries()) {
      await locks.forceRelease("k");
      const before = requests(dev.cluster);
      let token = "";
      const sent = (async () => {
        token = await scope();
      })();
      await sent;
      // Every node answered the scope's rounds (acquire + end): 2N, and the disposal adds none.
      await eventually(() => requests(dev.cluster) >= before + 2 * N);
      await sleep(50);
      expect(requests(dev.cluster) - before).toBe(2 * N);
      const want = left[i] === "token" ? token : left[i] === "done" ? `done:${token}` : null;
      await onEveryNode(full, want);
    }
    expect(events.filter((e) => e.type === "release").length).toBe(1);
  });
});
