/**
 * The demo's concurrency limit: a burst through the example app's `POST /exports/:id`, whose
 * `limit({ permits: 3, wait: 10_000 })` lets three exports render at once across every isolate
 * and queues the rest for a permit. Each answer says how many renders its isolate was running
 * when it started (itself included), so the burst shows the limit from the Worker's side.
 *
 * @module
 */
import type { Miniflare } from "miniflare";
import type { DevCluster } from "../../src/dev";

/** What the burst came to. */
export interface LimitSummary {
  readonly requests: number;
  readonly permits: number;
  /** Answered 200: the export ran. */
  readonly exported: number;
  /** Answered 429: every permit stayed held for the whole wait. */
  readonly tooMany: number;
  readonly other: number;
  /** The most renders one answer saw running at once, its own included. */
  readonly mostRunning: number;
  readonly burstMs: number;
  readonly nodeRequests: number;
}

/**
 * Fire `size` exports at once and count what came back; `settled` reads the nodes' request count
 * once the background releases stopped adding to it.
 *
 * @example
 * const { summary, lines } = await exportBurst(mf, cluster, 10, 3, 300, settledNodeRequests);
 */
export async function exportBurst(
  mf: Miniflare,
  cluster: DevCluster,
  burst: { size: number; permits: number; exportMs: number },
  settled: (cluster: DevCluster) => Promise<number>,
): Promise<{ summary: LimitSummary; lines: string[] }> {
  const { size, permits, exportMs } = burst;
  for (const control of cluster.controls) control.resetStats();
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: size }, async (_, i) => {
      const res = await mf.dispatchFetch(`http://localhost/exports/exp-${i}`, { method: "POST" });
      const body = (await res.json().catch(() => ({}))) as { running?: number };
      return { status: res.status, running: body.running ?? 0 };
    }),
  );
  const burstMs = Math.round(performance.now() - started);
  const exported = answers.filter((a) => a.status === 200).length;
  const tooMany = answers.filter((a) => a.status === 429).length;
  const summary: LimitSummary = {
    requests: size,
    permits,
    exported,
    tooMany,
    other: size - exported - tooMany,
    mostRunning: Math.max(0, ...answers.map((a) => a.running)),
    burstMs,
    nodeRequests: await settled(cluster),
  };
  const rounds = Math.ceil(size / permits);
  const lines = [
    "",
    `Concurrency limit: ${size} requests at once to POST /exports/:id, limit({ permits: ${permits}, wait: 10_000 })`,
    `  exported ${exported}, 429 ${tooMany}, other ${summary.other}; at most ${summary.mostRunning} running at once` +
      " (the Worker counts its renders)",
    `  the burst took ${burstMs} ms: ${rounds} turns of ${exportMs} ms, ${permits} at a time; the others` +
      " waited for a permit",
    `  node requests ${summary.nodeRequests} (${(summary.nodeRequests / size).toFixed(1)} per request;` +
      ` an uncontended permit costs 2N = ${2 * cluster.nodes.length}, a waiter also listens and refreshes)`,
  ];
  return { summary, lines };
}
