/**
 * A granted round whose request to one node runs after the grant's release there (docs/SAFETY.md
 * §2 RELEASE, L3), on a real 3-node dev cluster: a `latency` fault holds node 2's ACQUIRE before
 * it runs, past the client's 500 ms timeout; the round is granted by nodes 0 and 1, the holder
 * releases at once, and the release reaches node 2 before the late ACQUIRE runs there.
 *
 * - The release writes the token's tombstone on node 2 (its request went unheard), so the late
 *   ACQUIRE places nothing: the key is not blocked for the lease by a token nobody holds.
 * - A round that heard every node's answer pays nothing: its release leaves no tombstone key.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { evalCalls, eventually, pttlBack, readBack, resetCluster, uniquePrefix } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });
const SLOW = 2;
const LATE_MS = 1_200;
const LEASE = 10_000;

afterEach(() => resetCluster(dev.cluster));

const make = (prefix: string) =>
  createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 500, lease: LEASE, wait: 0 });

describe("a granted round's request that runs after the release", () => {
  it("places nothing: the release left the token's tombstone where the request went unheard", async () => {
    const prefix = uniquePrefix("late-release");
    const locks = make(prefix);
    // Warm up: every script the round uses is loaded and its SHA known (one request per node).
    await (await locks.acquire("warm")).release({ settled: true });

    const before = await evalCalls(dev, SLOW);
    dev.cluster.controls[SLOW]?.inject({ kind: "latency", ms: LATE_MS, count: 1 });
    const lock = await locks.acquire("k");
    expect((await lock.release({ settled: true })).status).toBe("released");
    // The release ran on the slow node (its ACQUIRE had timed out) before that ACQUIRE did.
    expect((await pttlBack(dev, N, `${prefix}k:void:${lock.token}`))[SLOW]).toBeGreaterThan(0);
    // Then the late ACQUIRE ran there: two script calls on it (the release, the acquire).
    await eventually(async () => (await evalCalls(dev, SLOW)) >= before + 2, 10_000);

    // Nothing placed anywhere: the late ACQUIRE found the tombstone.
    expect(await readBack(dev, N, `${prefix}k`)).toEqual([null, null, null]);
    // The tombstone is on the slow node only, for at most the round's TTL.
    const tombs = await pttlBack(dev, N, `${prefix}k:void:${lock.token}`);
    expect(tombs.slice(0, SLOW)).toEqual([-2, -2]);
    expect(tombs[SLOW]).toBeGreaterThan(0);
    expect(tombs[SLOW]).toBeLessThanOrEqual(LEASE);
    // The key is free for the next caller (not held on node 2 for the lease).
    const next = await make(prefix).acquire("k");
    expect(await readBack(dev, N, `${prefix}k`)).toEqual([next.token, next.token, next.token]);
    expect((await next.release({ settled: true })).status).toBe("released");
  });

  it("a round that heard every node's answer leaves no tombstone key", async () => {
    const prefix = uniquePrefix("heard-release");
    const locks = make(prefix);
    const lock = await locks.acquire("k");
    // A node still answering when the release starts is waited for: its answer is heard.
    expect((await lock.release({ settled: true })).status).toBe("released");
    expect(await readBack(dev, N, `${prefix}k`)).toEqual([null, null, null]);
    expect(await pttlBack(dev, N, `${prefix}k:void:${lock.token}`)).toEqual([-2, -2, -2]);
  });
});
