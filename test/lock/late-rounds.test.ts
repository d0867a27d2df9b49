/**
 * Rounds whose requests run after their timeout (docs/SAFETY.md L3, theorem 3), on a real 3-node
 * dev cluster: a `latency` fault holds a request before it runs, past the client's 500 ms
 * timeout, on two of three nodes; the failed round's cleanup (or a resume's undo) goes out at once
 * and lands first; then the late requests run.
 *
 * - An acquire round that failed that way must not leave its token on those nodes: the next caller
 *   gets the lock, not `LockBusyError` "held on 2 of 3 nodes" for the rest of the lease.
 * - A resume that failed that way must leave the ticket resumable: the redelivery resumes it, a
 *   duplicate after that is still refused.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks, type LockTicket } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { evalCalls, eventually, readBack, resetCluster, uniquePrefix } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });
const SLOW = [1, 2];
const LATE_MS = 1_200;

afterEach(() => resetCluster(dev.cluster));

/** Script calls (EVAL and EVALSHA) redis-server `i` has run. */
const scriptCalls = (i: number) => evalCalls(dev, i);

/**
 * Delay the next request to each slow node by {@link LATE_MS} before it runs; resolves, once
 * `more` further script calls ran on each of them (the cleanup and the late request), to the
 * calls counted before.
 */
async function lateOnSlowNodes(): Promise<(more: number) => Promise<void>> {
  const before = await Promise.all(SLOW.map(scriptCalls));
  for (const i of SLOW) dev.cluster.controls[i]?.inject({ kind: "latency", ms: LATE_MS, count: 1 });
  return (more) =>
    eventually(async () => {
      const now = await Promise.all(SLOW.map(scriptCalls));
      return now.every((calls, j) => calls >= (before[j] as number) + more);
    }, 10_000);
}

const make = (prefix: string) =>
  createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 500, lease: 10_000, wait: 0 });

describe("rounds whose requests run after their timeout on a majority", () => {
  it("a failed acquire round leaves nothing behind: the next caller gets the lock", async () => {
    const prefix = uniquePrefix("late-acquire");
    const first = make(prefix);
    const second = make(prefix);
    // Warm up: every script the round uses is loaded and its SHA known (one request per node).
    await (await first.acquire("warm")).release();

    const ran = await lateOnSlowNodes();
    const error = (await first.acquire("k").catch((e: unknown) => e)) as Error;
    expect(error.name).toBe("QuorumError");
    // The cleanup landed first on each slow node, then the late ACQUIRE ran there.
    await ran(2);

    const values = await readBack(dev, N, `${prefix}k`);
    expect(values).toEqual([null, null, null]);
    const lock = await second.acquire("k");
    expect(await readBack(dev, N, `${prefix}k`)).toEqual([lock.token, lock.token, lock.token]);
    expect((await lock.release()).status).toBe("released");
  });

  it("a failed resume leaves the ticket resumable: the redelivery resumes, a duplicate does not", async () => {
    const prefix = uniquePrefix("late-resume");
    const sender = make(prefix);
    const receiver = make(prefix);
    const redelivery = make(prefix);
    const duplicate = make(prefix);
    await (await receiver.resume(await (await sender.acquire("warm")).ticket())).release();

    const lock = await sender.acquire("k");
    const ticket: LockTicket = JSON.parse(JSON.stringify(await lock.ticket({ lease: 10_000 })));
    const ran = await lateOnSlowNodes();
    const error = (await receiver.resume(ticket).catch((e: unknown) => e)) as Error;
    expect(error.name).toBe("QuorumError");
    // The undo landed first on each slow node, then the late RESUME ran there.
    await ran(2);
    expect(await readBack(dev, N, `${prefix}k`)).toEqual([
      ticket.token,
      ticket.token,
      ticket.token,
    ]);

    const resumed = await redelivery.resume(ticket);
    expect(await readBack(dev, N, `${prefix}k`)).toEqual([
      resumed.token,
      resumed.token,
      resumed.token,
    ]);
    const again = (await duplicate.resume(ticket).catch((e: unknown) => e)) as Error;
    expect(again.name).toBe("LockLostError");
    // The failed resume said so (after the behaviour, which is what matters).
    expect(error.message).toContain("a redelivery can resume it");
    expect((await resumed.release()).status).toBe("released");
    expect(await readBack(dev, N, `${prefix}k`)).toEqual([null, null, null]);
  });
});
