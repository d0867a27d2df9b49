/**
 * Section 7: contention as deployments see it — every node request delayed by a WAN-like latency
 * (`--latency 8-12`: the dev cluster's latency fault on every node; `--far 40-60` delays the last
 * node more), independent clients (one `Locks` per worker, as one per Lambda invocation) polling
 * and with `wake`, at 1, 3 and 5 nodes, the shared-`Locks` mode, and `@upstash/lock` (1 node), one
 * after the other in one run. The floor: a hand-off costs at least the hold plus one round trip.
 *
 * @module
 */
import type { BenchCluster } from "./cluster";
import {
  type ContentionRow,
  type EdgelockMode,
  edgelockSetup,
  runOne,
  type Setup,
  upstashLockSetup,
} from "./contention";
import { sleep } from "./stats";

export interface WanOptions {
  readonly workers: number;
  readonly holdMs: number;
  readonly durationMs: number;
  /** Per node request latency range, ms. */
  readonly latency: readonly [number, number];
  /** A farther last node (its own range), if any. */
  readonly far?: readonly [number, number] | undefined;
}

export interface WanResult {
  readonly options: WanOptions;
  readonly rows: readonly ContentionRow[];
  /** Sections/s if every hand-off cost only the hold plus one mean round trip. */
  readonly floorSectionsPerSecond: number;
}

/** Parse `8-12` (or `10`) into a latency range. */
export function parseRange(flag: string, text: string): [number, number] {
  const match = /^(\d+)(?:-(\d+))?$/.exec(text);
  const min = Number(match?.[1]);
  const max = Number(match?.[2] ?? match?.[1]);
  if (match === null || !(min <= max))
    throw new Error(`--${flag}: expected <min>-<max> ms, got ${text}`);
  return [min, max];
}

const MODES: readonly EdgelockMode[] = ["clients", "wake", "shared"];

/**
 * The WAN contention section.
 *
 * @example
 * const wan = await runWan(cluster, { workers: 16, holdMs: 20, durationMs: 4_000, latency: [8, 12] });
 */
export async function runWan(cluster: BenchCluster, options: WanOptions): Promise<WanResult> {
  const n = cluster.nodes.length;
  const [min, max] = options.latency;
  const last = cluster.controls.length - 1;
  await Promise.all(
    cluster.controls.map((node, i) =>
      node.inject({
        kind: "latency",
        ms: i === last && options.far ? [...options.far] : [min, max],
      }),
    ),
  );
  const key = (id: string) => `bench:wan:${id}:${crypto.randomUUID()}`;
  const setups: (() => Setup)[] = [() => upstashLockSetup(cluster, key("upstash-lock"))];
  for (const nodes of [1, 3, n]) {
    for (const mode of MODES)
      setups.push(() => edgelockSetup(cluster, nodes, key(`e-${nodes}`), mode));
  }
  const rows: ContentionRow[] = [];
  try {
    for (const make of setups) {
      rows.push(await runOne(cluster, make(), options));
      await sleep(200);
    }
  } finally {
    await Promise.all(cluster.controls.map((node) => node.clearFaults()));
  }
  const roundTrip = (min + max) / 2;
  return { options, rows, floorSectionsPerSecond: 1_000 / (options.holdMs + roundTrip) };
}
