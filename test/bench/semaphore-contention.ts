/**
 * Semaphore bench, section 2: contention at WAN latency. Every node request is delayed by the dev
 * cluster's latency fault on every node (as wan.ts does), and `clients` loops run for a window,
 * each calling `use(work)` over and over: `sem.using(work)` for the semaphore with P permits, and
 * `locks.using(key, work)` for the lock (P = 1) beside it, in the same run. `work` holds for
 * `holdMs`. Two set-ups each (contention.ts's modes):
 * - `clients`: one `createLocks` per loop (Lambda invocations, Worker isolates: they meet only on
 *   the nodes, in the room's queue, and are handed a freed slot over their streams);
 * - `shared`: one `Locks` for all loops (the callers of one isolate).
 *
 * Per node count the contenders run in the order sem-clients, lock-clients, lock-shared,
 * sem-shared (ABBA), so that drift on the shared machine hits the two kinds alike.
 *
 * - Round trip: the p50 of an uncontended `locks.acquire` (one round, decided at a majority) at
 *   that latency and node count, measured just before the contenders. Floor: P / (hold + round
 *   trip) sections/s (each freed permit is handed on at best after one round trip).
 * - Sections: `work` calls entered inside the window (one entered after it returns at once and is
 *   not counted). Node requests: every request at the first N endpoints from the window's start
 *   until the loops ended and stragglers drained (a stream counts once, when it opens).
 * - Wait: from a `use` call to `work` entered; a call still waiting when the window ends counts
 *   its elapsed time (a lower bound, so starved loops are not hidden).
 * - In section: how many `work` calls run at once, counted in this process. More than P (1 for
 *   the lock) is a violation of Theorem 5 (docs/SAFETY.md §4c) and is reported loudly.
 *
 * @module
 */
import { setMaxListeners } from "node:events";
import { loadavg } from "node:os";
import { type AcquireOptions, createLocks, type Locks } from "../../src/index";
import { semaphore } from "../../src/semaphore";
import { endpointRequests, resetEndpointStats, settle } from "./clients";
import type { BenchCluster } from "./cluster";
import { round3, type Summary, sleep, summarize } from "./stats";
import { LEASE } from "./uncontended";

export interface SemContentionOptions {
  readonly nodeCounts: readonly number[];
  readonly permits: number;
  readonly clients: number;
  readonly holdMs: number;
  /** Window per contender, ms. */
  readonly durationMs: number;
  /** Per node request latency range, ms. */
  readonly latency: readonly [number, number];
  /** Uncontended acquires timed per node count for the round trip. */
  readonly roundTrips: number;
}

export type Kind = "semaphore" | "lock";
export type Mode = "clients" | "shared";

export interface SemContentionRow {
  /** `sem-N-mode` or `lock-N-mode`. */
  readonly id: string;
  readonly kind: Kind;
  readonly mode: Mode;
  readonly nodes: number;
  /** P for the semaphore, 1 for the lock. */
  readonly permits: number;
  readonly sections: number;
  readonly sectionsPerSecond: number;
  /** permits / (hold + round trip at this node count), sections/s. */
  readonly floor: number;
  readonly nodeRequests: number;
  readonly requestsPerSection: number;
  readonly wait: Summary;
  /** Mean time inside `work`, ms: the hold as this process's timers delivered it. */
  readonly holdMeanMs: number;
  /** The most `work` calls running at once, and the grants that made it exceed `permits`. */
  readonly maxInside: number;
  readonly violations: number;
  /** This process's CPU time over the window ÷ the window (1 = one core busy throughout). */
  readonly benchCpu: number;
  readonly errors: number;
  readonly lastError?: string;
}

export interface SemContentionResult {
  readonly options: SemContentionOptions;
  /** Per node count: uncontended acquire at the injected latency, ms. */
  readonly roundTrips: readonly { readonly nodes: number; readonly summary: Summary }[];
  readonly rows: readonly SemContentionRow[];
  /** 1-minute load average before and after. */
  readonly load: readonly [number, number];
}

/** One loop's way in: run `work` holding a permit (or the lock), as the library's `using`. */
type Use = (work: () => Promise<void>, options: AcquireOptions) => Promise<void>;

interface Setup {
  readonly kind: Kind;
  readonly mode: Mode;
  readonly uses: readonly Use[];
}

function setup(cluster: BenchCluster, n: number, kind: Kind, mode: Mode, o: SemContentionOptions) {
  const key = `bench:sem:c:${kind}:${n}:${mode}:${crypto.randomUUID()}`;
  const make = (): Use => {
    const locks = createLocks({ nodes: cluster.nodes.slice(0, n), lease: LEASE });
    if (kind === "lock") return (work, options) => locks.using(key, work, options);
    const sem = semaphore(locks, key, { permits: o.permits });
    return (work, options) => sem.using(work, options);
  };
  const shared = mode === "shared" ? make() : undefined;
  const uses = Array.from({ length: o.clients }, () => shared ?? make());
  return { kind, mode, uses } satisfies Setup;
}

/** p50 of `times` uncontended acquires (release not timed) on the first `n` nodes. */
async function roundTrip(cluster: BenchCluster, n: number, times: number): Promise<Summary> {
  const locks: Locks = createLocks({ nodes: cluster.nodes.slice(0, n), lease: LEASE });
  const key = `bench:sem:rtt:${n}`;
  const samples: number[] = [];
  for (let i = -3; i < times; i++) {
    const t0 = performance.now();
    const lock = await locks.acquire(key);
    if (i >= 0) samples.push(performance.now() - t0);
    await lock.release();
  }
  return summarize(samples);
}

async function runOne(
  cluster: BenchCluster,
  n: number,
  s: Setup,
  o: SemContentionOptions,
  floorRtt: number,
): Promise<SemContentionRow> {
  const permits = s.kind === "lock" ? 1 : o.permits;
  // Warm-up: scripts cached on every node, connections open.
  for (const use of s.uses) await use(async () => {}, { wait: 5_000 });
  await settle(cluster);
  await resetEndpointStats(cluster);
  const before = await endpointRequests(cluster, n);
  const cpu = process.cpuUsage();
  const start = performance.now();
  const end = start + o.durationMs;
  const stop = new AbortController();
  setMaxListeners(4 * o.clients, stop.signal);
  const timer = setTimeout(() => stop.abort(new Error("window over")), o.durationMs);
  const waits: number[] = [];
  let inside = 0;
  let maxInside = 0;
  let violations = 0;
  let sections = 0;
  let heldMs = 0;
  let errors = 0;
  let lastError: string | undefined;
  const work = async (asked: number) => {
    const at = performance.now();
    if (at > end) return; // granted after the window: released at once, not counted
    waits.push(at - asked);
    inside++;
    maxInside = Math.max(maxInside, inside);
    if (inside > permits) {
      violations++;
      console.error(`!!! ${s.kind}-${n}-${s.mode}: ${inside} in the section, permits ${permits}`);
    }
    try {
      await sleep(o.holdMs);
    } finally {
      inside--;
      sections++;
      heldMs += performance.now() - at;
    }
  };
  const loop = async (use: Use) => {
    while (performance.now() < end) {
      const asked = performance.now();
      let entered = false;
      const run = () => {
        entered = true;
        return work(asked);
      };
      try {
        await use(run, { wait: Math.ceil(end - asked) + 1_000, signal: stop.signal });
      } catch (error) {
        if (stop.signal.aborted && !entered) {
          waits.push(end - asked); // still waiting at the window's end: a lower bound
          break;
        }
        errors++;
        lastError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        await sleep(10);
      }
    }
  };
  await Promise.all(s.uses.map(loop));
  const used = process.cpuUsage(cpu);
  const ranMs = performance.now() - start;
  clearTimeout(timer);
  await settle(cluster);
  const nodeRequests = (await endpointRequests(cluster, n)) - before;
  const floor = permits / ((o.holdMs + floorRtt) / 1_000);
  return {
    id: `${s.kind === "lock" ? "lock" : "sem"}-${n}-${s.mode}`,
    kind: s.kind,
    mode: s.mode,
    nodes: n,
    permits,
    sections,
    sectionsPerSecond: sections / (o.durationMs / 1_000),
    floor,
    nodeRequests,
    requestsPerSection: sections === 0 ? Number.POSITIVE_INFINITY : nodeRequests / sections,
    wait: summarize(waits),
    holdMeanMs: sections === 0 ? Number.NaN : heldMs / sections,
    maxInside,
    violations,
    benchCpu: (used.user + used.system) / 1_000 / ranMs,
    errors,
    ...(lastError === undefined ? {} : { lastError }),
  };
}

const ORDER: readonly [Kind, Mode][] = [
  ["semaphore", "clients"],
  ["lock", "clients"],
  ["lock", "shared"],
  ["semaphore", "shared"],
];

/**
 * The semaphore and the lock under contention at WAN latency, at each node count.
 *
 * @example
 * const c = await runSemContention(cluster, { nodeCounts: [1, 3, 5], permits: 3, clients: 16, holdMs: 20, durationMs: 4_000, latency: [8, 12], roundTrips: 15 });
 */
export async function runSemContention(
  cluster: BenchCluster,
  o: SemContentionOptions,
  log: (message: string) => void = () => {},
): Promise<SemContentionResult> {
  const load0 = round3(loadavg()[0] ?? 0);
  const [min, max] = o.latency;
  await Promise.all(cluster.controls.map((c) => c.inject({ kind: "latency", ms: [min, max] })));
  const rows: SemContentionRow[] = [];
  const roundTrips: SemContentionResult["roundTrips"][number][] = [];
  try {
    for (const n of o.nodeCounts) {
      const summary = await roundTrip(cluster, n, o.roundTrips);
      roundTrips.push({ nodes: n, summary });
      log(`contention, ${n} node(s): round trip p50 ${summary.p50.toFixed(1)} ms`);
      for (const [kind, mode] of ORDER) {
        const row = await runOne(cluster, n, setup(cluster, n, kind, mode, o), o, summary.p50);
        log(
          `  ${row.id}: ${row.sectionsPerSecond.toFixed(1)} sections/s of floor ${row.floor.toFixed(1)}, max in section ${row.maxInside}`,
        );
        rows.push(row);
        // The clients' streams close a second after their last use: let them, before the next.
        await sleep(1_100);
      }
    }
  } finally {
    await Promise.all(cluster.controls.map((c) => c.clearFaults()));
  }
  return { options: o, roundTrips, rows, load: [load0, round3(loadavg()[0] ?? 0)] };
}
