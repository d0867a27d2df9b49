/**
 * Sample statistics and the interleaved runner of the lock bench. Timing claims are ratios of
 * contenders measured in the same run: each round runs every contender once, in an order rotated
 * per round, so drift (other processes on the machine, GC, thermal) hits all of them alike.
 *
 * @module
 */

/** Summary of a set of durations in ms. */
export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly mean: number;
  readonly max: number;
}

/** The `q` quantile (nearest rank) of ascending `sorted`; NaN when empty. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] as number;
}

/** p50 / p90 / p99 / mean / max of `samples` (ms). */
export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((acc, x) => acc + x, 0);
  return {
    n: sorted.length,
    p50: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    p99: quantile(sorted, 0.99),
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
    max: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number),
  };
}

/** One thing to time: `run` does one full operation (e.g. acquire + release). */
export interface Contender {
  readonly id: string;
  readonly run: () => Promise<void>;
}

/** Options of {@link interleave}. */
export interface InterleaveOptions {
  /** Recorded rounds. */
  readonly rounds: number;
  /** Unrecorded rounds first (JIT, connection pools, script caches). */
  readonly warmup: number;
  /** Stop recording after this many ms even if `rounds` is not reached. */
  readonly timeLimitMs: number;
}

/** Per contender id: recorded durations in ms, plus how many rounds were recorded. */
export interface InterleaveResult {
  readonly samples: ReadonlyMap<string, number[]>;
  /** Per contender id: operations that threw (not sampled), and the last error's message. */
  readonly errors: ReadonlyMap<string, { count: number; last: string }>;
  readonly rounds: number;
  readonly truncated: boolean;
}

/**
 * Run every contender once per round, the order rotated by one each round (so none always follows
 * the same other one), sequentially: only one operation is in flight at any time. An operation
 * that throws is counted as an error and not sampled; the run goes on.
 *
 * @example
 * const { samples } = await interleave([{ id: "a", run: a }, { id: "b", run: b }], { rounds: 1000, warmup: 100, timeLimitMs: 60_000 });
 */
export async function interleave(
  contenders: readonly Contender[],
  options: InterleaveOptions,
): Promise<InterleaveResult> {
  const samples = new Map<string, number[]>(contenders.map((c) => [c.id, []]));
  const errors = new Map<string, { count: number; last: string }>();
  const attempt = async (contender: Contender): Promise<boolean> => {
    try {
      await contender.run();
      return true;
    } catch (error) {
      const entry = errors.get(contender.id) ?? { count: 0, last: "" };
      entry.count++;
      entry.last = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      errors.set(contender.id, entry);
      return false;
    }
  };
  const k = contenders.length;
  for (let round = 0; round < options.warmup; round++) {
    for (let j = 0; j < k; j++) await attempt(contenders[(round + j) % k] as Contender);
  }
  errors.clear();
  const started = performance.now();
  let rounds = 0;
  while (rounds < options.rounds) {
    if (performance.now() - started > options.timeLimitMs) break;
    for (let j = 0; j < k; j++) {
      const contender = contenders[(rounds + j) % k] as Contender;
      const t0 = performance.now();
      if (await attempt(contender)) samples.get(contender.id)?.push(performance.now() - t0);
    }
    rounds++;
  }
  return { samples, errors, rounds, truncated: rounds < options.rounds };
}

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

/** Round to 3 decimals (JSON output). */
export const round3 = (x: number): number => Math.round(x * 1000) / 1000;
