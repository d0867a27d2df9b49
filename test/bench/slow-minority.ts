/**
 * Section 2: a slow minority must not slow a quorum. edgelock on 5 nodes, uncontended acquire +
 * release, under three conditions of the last node: none, +200 ms latency on every request, and
 * its redis-server paused (SIGSTOP; requests stall until edgelock's per-node timeout aborts them).
 * A fourth, informational condition runs edgelock on the first 4 nodes only ("without"): a round
 * then also waits for the 3rd answer of 4, which is what a faulted 5th node leaves, so it shows how
 * much of a slowdown is order statistics (the 3rd fastest of 4 answers is later than the 3rd
 * fastest of 5) rather than overhead of the slow node's pending requests.
 * Conditions alternate in blocks (rotated per round) so drift hits all of them alike; after a
 * fault block the node is restored and its stragglers drain before the next block.
 *
 * @module
 */
import { createLocks, type LockEvent } from "../../src/index";
import { settle } from "./clients";
import type { BenchCluster, BenchNode } from "./cluster";
import { type Summary, sleep, summarize } from "./stats";
import { LEASE } from "./uncontended";

export type Condition = "none" | "latency" | "paused" | "without";

export interface SlowMinorityRow {
  readonly condition: Condition;
  readonly summary: Summary;
  /** Share of acquire rounds in which some node reported a holder (see `onEvent` below). */
  readonly roundsSeeingHolder: number;
  /** Acquire + release operations that threw (not sampled). */
  readonly errors: number;
  readonly lastError?: string;
}

export interface SlowMinorityResult {
  readonly nodes: number;
  readonly latencyMs: number;
  readonly rows: readonly SlowMinorityRow[];
}

interface Tally {
  rounds: number;
  sawHolder: number;
  errors: number;
  lastError: string;
}

export interface SlowMinorityOptions {
  /** Recorded iterations per condition. */
  readonly iterations: number;
  readonly warmup: number;
  readonly blockSize: number;
  /** Added latency of the slow node, ms. */
  readonly latencyMs: number;
}

const CONDITIONS: readonly Condition[] = ["none", "latency", "paused", "without"];

async function apply(node: BenchNode, condition: Condition, latencyMs: number): Promise<void> {
  if (condition === "latency") await node.inject({ kind: "latency", ms: latencyMs });
  if (condition === "paused") await node.pause();
}

async function restore(node: BenchNode): Promise<void> {
  await node.resume();
  await node.clearFaults();
}

/**
 * Measure edgelock on all of `cluster`'s nodes with the last one healthy, slow, then paused.
 *
 * @example
 * const { rows } = await runSlowMinority(cluster, { iterations: 600, warmup: 50, blockSize: 100, latencyMs: 200 });
 */
export async function runSlowMinority(
  cluster: BenchCluster,
  options: SlowMinorityOptions,
): Promise<SlowMinorityResult> {
  const n = cluster.nodes.length;
  const slow = cluster.controls[n - 1];
  if (slow === undefined) throw new Error("cluster has no node");
  const tally = new Map<Condition, Tally>(
    CONDITIONS.map((c) => [c, { rounds: 0, sawHolder: 0, errors: 0, lastError: "" }]),
  );
  let current: Condition = "none";
  // Back-to-back acquires of one key by one client: a node reporting a holder can only be
  // reporting this client's own earlier grant (a release that has not reached it yet, or an
  // acquire that landed after its release).
  const onEvent = (event: LockEvent) => {
    if (event.type !== "acquire") return;
    const t = tally.get(current) as Tally;
    t.rounds++;
    if (event.outcomes.some((o) => o.status === "held")) t.sawHolder++;
  };
  const all = createLocks({ nodes: cluster.nodes, lease: LEASE, onEvent });
  const fewer = createLocks({ nodes: cluster.nodes.slice(0, n - 1), lease: LEASE, onEvent });
  const key = "bench:slow-minority";
  /** One acquire + release in ms, or undefined when it threw (counted). */
  const once = async (condition: Condition): Promise<number | undefined> => {
    current = condition;
    const locks = condition === "without" ? fewer : all;
    const t0 = performance.now();
    try {
      const lock = await locks.acquire(key);
      await lock.release();
      return performance.now() - t0;
    } catch (error) {
      const t = tally.get(condition) as Tally;
      t.errors++;
      t.lastError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return undefined;
    }
  };

  for (let i = 0; i < options.warmup; i++) {
    await once("none");
    await once("without");
  }
  for (const t of tally.values()) Object.assign(t, { rounds: 0, sawHolder: 0, errors: 0 });
  const samples = new Map<Condition, number[]>(CONDITIONS.map((c) => [c, []]));
  const blocks = Math.ceil(options.iterations / options.blockSize);
  try {
    for (let round = 0; round < blocks; round++) {
      for (let j = 0; j < CONDITIONS.length; j++) {
        const condition = CONDITIONS[(round + j) % CONDITIONS.length] as Condition;
        const xs = samples.get(condition) as number[];
        await apply(slow, condition, options.latencyMs);
        try {
          for (let i = 0; i < options.blockSize; i++) {
            const elapsed = await once(condition);
            if (elapsed !== undefined) xs.push(elapsed);
          }
        } finally {
          await restore(slow);
        }
        if (condition === "latency" || condition === "paused") {
          // Let the stragglers finish: delayed requests run out their latency; a resumed node
          // works off its backlog at once.
          await sleep(condition === "latency" ? options.latencyMs + 50 : 50);
          await settle(cluster);
        }
      }
    }
  } finally {
    await restore(slow);
  }
  return {
    nodes: n,
    latencyMs: options.latencyMs,
    rows: CONDITIONS.map((condition) => {
      const t = tally.get(condition) as Tally;
      return {
        condition,
        summary: summarize(samples.get(condition) ?? []),
        roundsSeeingHolder: t.rounds === 0 ? 0 : t.sawHolder / t.rounds,
        errors: t.errors,
        ...(t.errors === 0 ? {} : { lastError: t.lastError }),
      };
    }),
  };
}
