/**
 * Section 4: cost of one uncontended locked request on Workers, where every node request is a
 * subrequest. Each locked request is acquire + release with a Workers-like budget
 * (`budget.within(30_000, { subrequests: 50 })`), on 1, 3 and 5 nodes, plain and with fencing.
 * Requests are counted at the endpoints after stragglers drained (rounds resolve at a majority),
 * next to what edgelock charged to the budget. `@upstash/lock` (one node) for reference.
 *
 * @module
 */
import { Lock as UpstashLock } from "@upstash/lock";
import { budget, createLocks } from "../../src/index";
import { edgelockLikeClient, endpointRequests, resetEndpointStats, settle } from "./clients";
import type { BenchCluster } from "./cluster";
import { LEASE } from "./uncontended";

export interface CostRow {
  readonly id: string;
  readonly nodes: number;
  readonly fencing: boolean;
  readonly requestsPerLockedRequest: number;
  /** What edgelock charged to the budget per locked request (undefined for peers). */
  readonly chargedPerLockedRequest: number | undefined;
  /** docs/PERFORMANCE.md "Costs in node requests": 2N, or 3N with fencing on N > 1 (undefined for peers). */
  readonly expected: number | undefined;
}

/** Node requests of `run` repeated `times`, at the endpoints, after a warm-up run. */
export async function countRequests(
  cluster: BenchCluster,
  times: number,
  run: () => Promise<number>,
): Promise<{ requests: number; charged: number }> {
  await run();
  await settle(cluster);
  await resetEndpointStats(cluster);
  let charged = 0;
  for (let i = 0; i < times; i++) charged += await run();
  await settle(cluster);
  return { requests: await endpointRequests(cluster), charged };
}

/**
 * Requests per uncontended locked request for every node count and fencing setting.
 *
 * @example
 * const rows = await runCost(cluster, { nodeCounts: [1, 3, 5], times: 20 });
 */
export async function runCost(
  cluster: BenchCluster,
  options: { readonly nodeCounts: readonly number[]; readonly times: number },
): Promise<CostRow[]> {
  const rows: CostRow[] = [];
  for (const n of options.nodeCounts) {
    for (const fencing of [false, true]) {
      const locks = createLocks({ nodes: cluster.nodes.slice(0, n), lease: LEASE, fencing });
      const key = `bench:cost:${n}:${fencing}`;
      const { requests, charged } = await countRequests(cluster, options.times, async () => {
        const b = budget.within(30_000, { subrequests: 50 });
        const lock = await locks.acquire(key, { budget: b });
        await lock.release();
        return b.spent;
      });
      rows.push({
        id: `edgelock-${n}${fencing ? " fencing" : ""}`,
        nodes: n,
        fencing,
        requestsPerLockedRequest: requests / options.times,
        chargedPerLockedRequest: charged / options.times,
        expected: fencing && n > 1 ? 3 * n : 2 * n,
      });
    }
  }
  const node0 = cluster.nodes[0];
  if (node0 !== undefined) {
    const redis = edgelockLikeClient(node0) as unknown as ConstructorParameters<
      typeof UpstashLock
    >[0]["redis"];
    const { requests } = await countRequests(cluster, options.times, async () => {
      const lock = new UpstashLock({ id: "bench:cost:upstash-lock", redis, lease: LEASE });
      await lock.acquire();
      await lock.release();
      return 0;
    });
    rows.push({
      id: "upstash-lock",
      nodes: 1,
      fencing: false,
      requestsPerLockedRequest: requests / options.times,
      chargedPerLockedRequest: undefined,
      expected: undefined,
    });
  }
  return rows;
}
