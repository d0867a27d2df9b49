import { describe, expect, it } from "vitest";
import { createLocks, type LockEvent } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });

describe("queue smoke", () => {
  it("independent clients take turns in order", async () => {
    const prefix = `q${Math.random().toString(16).slice(2)}:`;
    const nodes = dev.cluster.nodes.map((n) => ({ url: n.url, token: n.token }));
    const events: LockEvent[] = [];
    const clients = Array.from({ length: 6 }, () =>
      createLocks({ nodes, prefix, lease: 5_000, wait: 10_000, onEvent: (e) => events.push(e) }),
    );
    const order: number[] = [];
    let inside = 0;
    let overlaps = 0;
    const started = performance.now();
    await Promise.all(
      clients.map(async (locks, i) => {
        await new Promise((r) => setTimeout(r, i * 5));
        for (let round = 0; round < 3; round++) {
          const lock = await locks.acquire("k");
          inside++;
          if (inside > 1) overlaps++;
          order.push(i);
          await new Promise((r) => setTimeout(r, 20));
          inside--;
          await lock.release();
        }
      }),
    );
    const elapsed = performance.now() - started;
    console.log("order", order.join(","), "ms", Math.round(elapsed), "events", events.length);
    expect(overlaps).toBe(0);
    expect(order.length).toBe(18);
  }, 30_000);
});
