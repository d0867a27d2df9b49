/**
 * Section 7: contention as deployments see it — every node request delayed by a WAN-like latency
 * (`--latency 8-12`: the dev cluster's latency fault on every node; `--far 40-60` delays the last
 * node more), at 1, 3 and 5 nodes, each edgelock set-up of {@link EdgelockMode}: independent
 * clients in the nodes' queues (`clients`), the same polling over nodes that cannot stream
 * (`polling`, the baseline: edgelock 0.1's behaviour), a fresh `Locks` per acquire (`lambda`) and
 * one shared `Locks` (`shared`); and `@upstash/lock` (1 node). The contenders run one after the
 * other, `rounds` times, the order reversed every other round so that drift on a shared machine
 * hits them alike; a contender's rounds are merged (sections and requests summed, waits pooled).
 * Then the absent head (head.ts). The floor: a hand-off costs at least the hold plus one round
 * trip.
 *
 * @module
 */
import { loadavg } from "node:os";
import type { BenchCluster } from "./cluster";
import {
  type ContentionRow,
  type EdgelockMode,
  edgelockSetup,
  runOne,
  type Samples,
  type Setup,
  upstashLockSetup,
} from "./contention";
import { type HeadRow, runHead } from "./head";
import { round3, sleep, summarize } from "./stats";

export interface WanOptions {
  readonly workers: number;
  readonly holdMs: number;
  /** Window per contender and round, ms. */
  readonly durationMs: number;
  /** Rounds over all contenders (each contender's window is `durationMs` per round). */
  readonly rounds: number;
  /** Per node request latency range, ms. */
  readonly latency: readonly [number, number];
  /** A farther last node (its own range), if any. */
  readonly far?: readonly [number, number] | undefined;
  /** Repetitions of each absent-head measurement (0: none). */
  readonly headTimes: number;
}

export interface WanResult {
  readonly options: WanOptions;
  readonly rows: readonly ContentionRow[];
  /** Sections/s if every hand-off cost only the hold plus one mean round trip. */
  readonly floorSectionsPerSecond: number;
  readonly head: readonly HeadRow[];
  /** 1-minute load average before the first and after the last contender. */
  readonly load: readonly [number, number];
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

const MODES: readonly EdgelockMode[] = ["clients", "polling", "lambda", "shared"];

/** One contender's rounds as one row: counts summed, waits pooled. */
function merge(
  rows: readonly ContentionRow[],
  samples: Samples,
  durationMs: number,
): ContentionRow {
  const [first] = rows;
  if (first === undefined) throw new Error("merge: no rows");
  const sum = (f: (r: ContentionRow) => number) => rows.reduce((a, r) => a + f(r), 0);
  const seconds = (rows.length * durationMs) / 1_000;
  const sections = sum((r) => r.sections);
  const nodeRequests = sum((r) => r.nodeRequests);
  const acquireRounds: Record<string, number> = {};
  for (const r of rows) {
    for (const [k, v] of Object.entries(r.acquireRounds ?? {}))
      acquireRounds[k] = (acquireRounds[k] ?? 0) + v;
  }
  return {
    ...first,
    sections,
    sectionsPerSecond: sections / seconds,
    nodeRequests,
    requestsPerSection: sections === 0 ? Number.POSITIVE_INFINITY : nodeRequests / sections,
    wait: summarize(samples.waits),
    gap: summarize(samples.gaps),
    benchCpu: sum((r) => r.benchCpu) / rows.length,
    loopDelayP99Ms: Math.max(...rows.map((r) => r.loopDelayP99Ms)),
    firstGrantMs: sum((r) => r.firstGrantMs) / rows.length,
    holdMeanMs: sum((r) => (r.sections === 0 ? 0 : r.holdMeanMs * r.sections)) / sections,
    errors: sum((r) => r.errors),
    overlaps: sum((r) => r.overlaps),
    ...(first.acquireRounds === undefined ? {} : { acquireRounds }),
  };
}

/**
 * The WAN contention section.
 *
 * @example
 * const wan = await runWan(cluster, { workers: 16, holdMs: 20, durationMs: 4_000, rounds: 2, latency: [8, 12], headTimes: 2 });
 */
export async function runWan(cluster: BenchCluster, options: WanOptions): Promise<WanResult> {
  const n = cluster.nodes.length;
  const [min, max] = options.latency;
  const last = cluster.controls.length - 1;
  const load0 = round3(loadavg()[0] ?? 0);
  await Promise.all(
    cluster.controls.map((node, i) =>
      node.inject({
        kind: "latency",
        ms: i === last && options.far ? [...options.far] : [min, max],
      }),
    ),
  );
  const contenders: { id: string; make: (key: string) => Setup }[] = [
    { id: "upstash-lock", make: (key) => upstashLockSetup(cluster, key) },
  ];
  for (const nodes of [1, 3, n]) {
    for (const mode of MODES) {
      contenders.push({
        id: `${nodes}-${mode}`,
        make: (key) => edgelockSetup(cluster, nodes, key, mode),
      });
    }
  }
  const perContender = contenders.map(() => ({
    rows: [] as ContentionRow[],
    samples: { waits: [], gaps: [] } as Samples,
  }));
  let head: HeadRow[] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      const order = contenders.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const i of order) {
        const contender = contenders[i];
        const into = perContender[i];
        if (contender === undefined || into === undefined) continue;
        const key = `bench:wan:${contender.id}:${crypto.randomUUID()}`;
        into.rows.push(await runOne(cluster, contender.make(key), options, into.samples));
        await sleep(200);
      }
    }
    if (options.headTimes > 0)
      head = await runHead(cluster, { nodeCounts: [1, 3, n], times: options.headTimes });
  } finally {
    await Promise.all(cluster.controls.map((node) => node.clearFaults()));
  }
  const rows = perContender.map(({ rows, samples }) => merge(rows, samples, options.durationMs));
  const roundTrip = (min + max) / 2;
  return {
    options,
    rows,
    floorSectionsPerSecond: 1_000 / (options.holdMs + roundTrip),
    head,
    load: [load0, round3(loadavg()[0] ?? 0)],
  };
}
