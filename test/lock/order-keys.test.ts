/**
 * "Our releases first" per key (docs/SAFETY.md §6), on a real 3-node dev cluster: a release of
 * ours still in flight holds up this instance's next acquire of any of its keys on each node, so
 * that acquire never finds our own old token there — whether the release and the acquire are on
 * the same key, a set and one of its keys, or a key and a set containing it. Each release is slowed
 * on every node so the acquire, sent right after it, would otherwise overtake it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { resetCluster, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 3 });

afterEach(() => resetCluster(dev.cluster));

const CASES: [string, string | string[], string | string[]][] = [
  ["a set, then one of its keys", ["a", "b"], "a"],
  ["a key, then a set containing it", "d", ["d", "e"]],
  ["the same key", "c", "c"],
];

describe("our releases first, per key", () => {
  it.each(CASES)("%s: the acquire waits for our release", async (_, first, second) => {
    const locks = createLocks({
      nodes: dev.cluster.nodes,
      prefix: uniquePrefix("order-keys"),
      requestTimeout: 1_000,
      lease: 5_000,
      wait: 0,
    });
    await (await locks.acquire("warm")).release();
    const outcomes: string[] = [];
    for (let i = 0; i < 10; i++) {
      const held = await locks.acquire(first);
      for (const control of dev.cluster.controls)
        control.inject({ kind: "latency", ms: 60, count: 1 });
      const releasing = held.release();
      const outcome = await locks.acquire(second).then(
        async (lock) => {
          await lock.release();
          return "acquired";
        },
        (error: Error) => error.name,
      );
      outcomes.push(outcome);
      expect((await releasing).status).toBe("released");
    }
    expect(outcomes).toEqual(Array(10).fill("acquired"));
  });
});
