/**
 * Section 6: Idempotency-Key through the Hono middleware on 1, 3 and 5 nodes. Node requests per
 * first request (target: the lock's 2N plus N for the record = 3N) and per replay (target: ≤ N),
 * counted at the endpoints after stragglers drained; and the latency of a replay against a first
 * request, interleaved in one run (a ratio, not an absolute time).
 *
 * @module
 */
import { Hono } from "hono";
import { idempotency } from "../../src/adapters/hono";
import { createLocks } from "../../src/index";
import { endpointRequests, resetEndpointStats, settle } from "./clients";
import type { BenchCluster } from "./cluster";
import { interleave, type Summary, summarize } from "./stats";
import { LEASE } from "./uncontended";

export interface IdempotencyRow {
  readonly nodes: number;
  readonly requestsPerFirst: number;
  readonly requestsPerReplay: number;
  readonly first: Summary;
  readonly replay: Summary;
}

/**
 * Measure first requests and replays on each node count.
 *
 * @example
 * const rows = await runIdempotency(cluster, { nodeCounts: [1, 3, 5], times: 20, rounds: 200 });
 */
export async function runIdempotency(
  cluster: BenchCluster,
  options: {
    readonly nodeCounts: readonly number[];
    readonly times: number;
    readonly rounds: number;
  },
): Promise<IdempotencyRow[]> {
  const rows: IdempotencyRow[] = [];
  for (const n of options.nodeCounts) {
    const locks = createLocks({
      nodes: cluster.nodes.slice(0, n),
      lease: LEASE,
      prefix: `bench:idem:${n}:`,
    });
    const app = new Hono();
    app.post("/charge", idempotency({ locks }), (c) => c.json({ charged: true }, 201));
    let next = 0;
    const send = async (key: string) => {
      const res = await app.request("/charge", {
        method: "POST",
        headers: { "Idempotency-Key": `"${key}"` },
        body: "amount=5",
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`status ${res.status}`);
    };
    const first = () => send(`first-${next++}`);
    await send("replayed");
    const replay = () => send("replayed");
    const count = async (run: () => Promise<void>) => {
      await settle(cluster);
      await resetEndpointStats(cluster);
      for (let i = 0; i < options.times; i++) await run();
      await settle(cluster);
      return (await endpointRequests(cluster)) / options.times;
    };
    const requestsPerFirst = await count(first);
    const requestsPerReplay = await count(replay);
    const timed = await interleave(
      [
        { id: "first", run: first },
        { id: "replay", run: replay },
      ],
      { rounds: options.rounds, warmup: 20, timeLimitMs: 60_000 },
    );
    rows.push({
      nodes: n,
      requestsPerFirst,
      requestsPerReplay,
      first: summarize(timed.samples.get("first") ?? []),
      replay: summarize(timed.samples.get("replay") ?? []),
    });
  }
  return rows;
}
