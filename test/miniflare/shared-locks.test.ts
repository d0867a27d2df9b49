/**
 * The README's Workers pattern inside workerd, with real request contexts: one `Locks` per env
 * shared by the isolate's requests (`shared-locks.worker.ts`, bundled with esbuild and run by
 * Miniflare), behind Hono `lock()`, three healthy dev nodes, bursts of concurrent POSTs on one key.
 *
 * The `workers` vitest project cannot show this: its `exports.default.fetch` calls did not end
 * their request contexts as `wrangler dev` does, so a request's floating work never stopped there.
 * Here every `dispatchFetch` is a request of its own, as under `wrangler dev` and in production.
 */
import { describe, expect, it } from "vitest";
import { useDevCluster } from "../support/dev-cluster";
import { useWorker } from "./support/worker";

const dev = useDevCluster({ nodes: 3 });
const BURSTS = 10;
const BURST = 20;

const worker = useWorker(
  new URL("./shared-locks.worker.ts", import.meta.url),
  () => ({
    EDGELOCK_NODES: JSON.stringify(dev.cluster.nodes),
    LOCK_PREFIX: `mf:${crypto.randomUUID()}:`,
    // The dev nodes run in this test process; a loaded machine must not turn into timeouts.
    REQUEST_TIMEOUT_MS: "1000",
  }),
  { structuredLogs: true },
);

async function waitFree(id: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const res = await worker.mf.dispatchFetch(`http://worker.test/free/${id}`);
    const { free } = (await res.json()) as { free: boolean };
    if (free) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`job:${id} never became free`);
}

describe("one Locks per env shared by a Worker's requests (the README's pattern)", () => {
  it("bursts of 20 concurrent requests on one key: one 200 and 19 409s each, never a 503", async () => {
    const id = crypto.randomUUID();
    const tallies: Record<number, number>[] = [];
    const problems: string[] = [];
    for (let b = 0; b < BURSTS; b++) {
      await waitFree(id);
      const url = `http://worker.test/jobs/${id}?burst=${b}&of=${BURST}`;
      const responses = await Promise.all(
        Array.from({ length: BURST }, () => worker.mf.dispatchFetch(url, { method: "POST" })),
      );
      const tally: Record<number, number> = {};
      for (const res of responses) {
        tally[res.status] = (tally[res.status] ?? 0) + 1;
        const body = await res.text();
        if (res.status !== 200 && res.status !== 409) problems.push(`${res.status} ${body}`);
      }
      tallies.push(tally);
    }
    console.log(`per burst: ${tallies.map((t) => JSON.stringify(t)).join(" ")}`);
    expect(problems.slice(0, 3)).toEqual([]);
    expect(tallies).toEqual(Array(BURSTS).fill({ 200: 1, 409: BURST - 1 }));
    expect(worker.output()).not.toMatch(/different request context/i);
  }, 120_000);
});
