/**
 * A burst at a quorum on real redis-servers (docs/SAFETY.md §2 P4, and §6 "The queue"): callers that
 * start in the same millisecond have one place, and the nodes order them by token. Counts are
 * asserted, never times: the looks each call sends (acquire events) and the holders at once.
 *
 * Found by the WAN bench (16 callers of one `Locks` at 3 and 5 nodes, 2026-11-28): with places
 * compared alone, each holder of a split waited for the others to give way (none did, until
 * their waits ended), and a release told to serve only waiters placed before its instance's next
 * caller left the key free while that caller waited in the queue for its refresh.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks, type LockEvent } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { resetCluster, sleep, uniquePrefix } from "./helpers";

const N = 3;
const CALLERS = 12;
const dev = useDevCluster({ nodes: N });
afterEach(() => resetCluster(dev.cluster));

describe("a burst of callers at a quorum", () => {
  it("callers of one instance starting together are each granted after a few looks, one at a time", async () => {
    // Every node request 8–12 ms late, as at WAN latency: the first looks split between nodes.
    await Promise.all(
      dev.cluster.controls.map((control) => control.inject({ kind: "latency", ms: [8, 12] })),
    );
    const events: LockEvent[] = [];
    const locks = createLocks({
      nodes: dev.cluster.nodes,
      prefix: uniquePrefix("qburst"),
      lease: 5_000,
      wait: 25_000,
      onEvent: (event) => events.push(event),
    });
    let inside = 0;
    let most = 0;
    const section = async () => {
      const lock = await locks.acquire("k");
      inside++;
      most = Math.max(most, inside);
      await sleep(10);
      inside--;
      await lock.release();
    };
    // Warm: the scripts are cached on every node, so no first look waits for a NOSCRIPT retry.
    await (await locks.acquire("warm")).release();
    events.length = 0;
    // Started in one tick: most have the same place (epoch ms of the call).
    await Promise.all(Array.from({ length: CALLERS }, section));

    const acquires = events.filter((e) => e.type === "acquire");
    expect(acquires.filter((e) => e.result === "granted")).toHaveLength(CALLERS);
    expect(most).toBe(1);
    // A waiter that is handed the key on each release looks twice (its first look and its
    // registration) plus a pass or two while a split resolves. One that is not handed the key
    // looks again each `retryDelayMax` (1 s) until it is first: about CALLERS / 2 looks on average.
    const looks = acquires.filter((e) => e.result !== "granted").length;
    expect(looks / CALLERS).toBeLessThanOrEqual(3);
  });
});
