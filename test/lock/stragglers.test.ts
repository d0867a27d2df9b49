/**
 * An acquire round resolves at a majority, so some of its per-node requests are still in flight
 * when `acquire()` returns. Whatever follows on the same lock (release, extend, complete) and any
 * later acquire of the same key by the same `Locks` must not overtake them on a node: a release
 * landing before the straggling acquire would leave an orphaned grant for the whole lease, and an
 * acquire landing before the previous release would find our own old token ("held").
 *
 * Latency jitter on every node reorders requests at random; one client acquires and releases one
 * key back to back, so any holder it ever sees is its own.
 */
import { describe, expect, it } from "vitest";
import { isLockBusyError } from "../../src/errors";
import { createLocks, type LockEvent, once } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, readBack, resetCluster, uniquePrefix } from "./helpers";

const N = 5;
const dev = useDevCluster({ nodes: N });
const ROUNDS = 60;
// The endpoints run in this test process; jitter of up to 20 ms plus a loaded CI machine.
const requestTimeout = 1_000;

function jitterEverywhere(): void {
  resetCluster(dev.cluster);
  for (const control of dev.cluster.controls) control.inject({ kind: "latency", ms: [0, 20] });
}

/** Counts acquire rounds and those in which a node reported a holder (only we ever hold it). */
function tally() {
  const seen = { rounds: 0, sawHolder: 0 };
  const onEvent = (event: LockEvent) => {
    if (event.type !== "acquire") return;
    seen.rounds++;
    if (event.outcomes.some((o) => o.status === "held")) seen.sawHolder++;
  };
  return { seen, onEvent };
}

async function noKeyLeft(key: string): Promise<void> {
  await eventually(async () => (await readBack(dev, N, key)).every((v) => v === null), 2_000);
}

describe("stragglers of a majority round never overtake or get overtaken", () => {
  it("back-to-back acquire/release by one client under jitter: never busy, nothing left", async () => {
    jitterEverywhere();
    const prefix = uniquePrefix("straggler-release");
    const { seen, onEvent } = tally();
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout, onEvent });
    let busy = 0;
    const statuses = new Set<string>();
    try {
      for (let i = 0; i < ROUNDS; i++) {
        try {
          const lock = await locks.acquire("k");
          statuses.add((await lock.release()).status);
        } catch (error) {
          if (!isLockBusyError(error)) throw error;
          busy++;
        }
      }
    } finally {
      resetCluster(dev.cluster);
    }
    console.log(`busy ${busy} of ${ROUNDS}; rounds seeing a holder ${seen.sawHolder}`);
    expect(busy).toBe(0);
    expect(seen.sawHolder).toBe(0);
    expect(seen.rounds).toBe(ROUNDS);
    expect([...statuses]).toEqual(["released"]);
    await noKeyLeft(`${prefix}k`);
  });

  it("extend right after acquire, then release, under jitter: extended every time, nothing left", async () => {
    jitterEverywhere();
    const prefix = uniquePrefix("straggler-extend");
    const { seen, onEvent } = tally();
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout, onEvent });
    let busy = 0;
    try {
      for (let i = 0; i < ROUNDS / 2; i++) {
        try {
          const lock = await locks.acquire("k");
          const { outcomes } = await lock.extend();
          expect(outcomes.filter((o) => o.status === "ok").length).toBeGreaterThanOrEqual(3);
          expect((await lock.release()).status).toBe("released");
        } catch (error) {
          if (!isLockBusyError(error)) throw error;
          busy++;
        }
      }
    } finally {
      resetCluster(dev.cluster);
    }
    expect(busy).toBe(0);
    expect(seen.sawHolder).toBe(0);
    await noKeyLeft(`${prefix}k`);
  });

  it("once() under jitter: the done marker ends up on every node, never an orphaned grant", async () => {
    jitterEverywhere();
    const prefix = uniquePrefix("straggler-once");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout });
    const keys = Array.from({ length: 10 }, (_, i) => `job${i}`);
    try {
      for (const key of keys) {
        const result = await once(locks, key, () => "ran");
        expect(result).toMatchObject({ status: "ran", recorded: true });
      }
    } finally {
      resetCluster(dev.cluster);
    }
    for (const key of keys) {
      await eventually(async () =>
        (await readBack(dev, N, `${prefix}${key}`)).every((v) => v?.startsWith("done:")),
      );
    }
  });
});
