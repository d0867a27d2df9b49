/**
 * Section 3: contention. `workers` concurrent loops on one key for a fixed window; each loop
 * acquires (waiting as long as the window lasts), holds for `holdMs`, releases, and starts over.
 *
 * - Sections: critical sections whose lock was granted inside the window (a holder at the end
 *   finishes its section; later grants are released and not counted).
 * - Node requests: every request from the start until all loops ended and stragglers drained:
 *   REST requests counted at the endpoints; node-redlock's TCP commands as the growth of
 *   `eval` + `evalsha` calls in `INFO commandstats` on each redis-server (read on separate
 *   connections; nothing else runs meanwhile).
 * - Wait: from the start of an acquire call to the grant. A call still waiting when the window
 *   ends is counted with its elapsed time (a lower bound), so starved workers are not hidden.
 * - Overlaps: times a loop got the lock while another loop was inside its section (must be 0).
 *
 * Peers are set up to keep retrying for the whole window with their own default delays:
 * `@upstash/lock` `retry: { attempts: ⌈left / 100⌉ + 1, delay: 100 }` (its default delay),
 * node-redlock `retryCount: ⌊left / 200⌋` (default delay 200 ± 100 ms); edgelock
 * `wait: window + 1 s` with an `AbortSignal` that fires at the end of the window, in the set-ups of
 * {@link EdgelockMode}: one shared `Locks`, one `Locks` per worker (the nodes' queues), the same
 * over nodes that cannot stream (polling, as edgelock 0.1 did), and a fresh `Locks` per acquire
 * (the Lambda model).
 *
 * @module
 */
import { setMaxListeners } from "node:events";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Lock as UpstashLock } from "@upstash/lock";
import type { Redis as IORedis } from "ioredis";
import Redlock from "redlock";
import type { DevNodeConfig } from "../../src/dev/index";
import { createLocks, type Locks, type RedisLike } from "../../src/index";
import {
  edgelockLikeClient,
  endpointRequests,
  ioredisClients,
  resetEndpointStats,
  settle,
  totalScriptCalls,
} from "./clients";
import type { BenchCluster } from "./cluster";
import { type Summary, sleep, summarize } from "./stats";
import { LEASE } from "./uncontended";

export interface ContentionOptions {
  readonly workers: number;
  readonly holdMs: number;
  readonly durationMs: number;
}

export interface ContentionRow {
  readonly id: string;
  readonly library: string;
  readonly nodes: number;
  readonly counting: "endpoint requests" | "INFO commandstats";
  readonly sections: number;
  readonly sectionsPerSecond: number;
  readonly nodeRequests: number;
  readonly requestsPerSection: number;
  readonly wait: Summary;
  /**
   * Hand-off gaps: from a release's start to the next grant, for grants made while nobody held
   * the lock (the idle time a section costs beyond its hold: at least one round trip).
   */
  readonly gap: Summary;
  /** Mean time from a grant to its release call, ms: the hold as the event loop delivered it. */
  readonly holdMeanMs: number;
  /**
   * The bench process's CPU time over the window ÷ the window (1 = one core busy throughout) and
   * its event loop's p99 delay, ms: where the workers' own process is the bottleneck (all of them
   * share it, as independent clients would not), these show it.
   */
  readonly benchCpu: number;
  readonly loopDelayP99Ms: number;
  /** From the window's start to its first grant, ms (streams opening, first looks). */
  readonly firstGrantMs: number;
  readonly errors: number;
  readonly overlaps: number;
  /** edgelock only: acquire rounds by result during the window (`onEvent`). */
  readonly acquireRounds?: Readonly<Record<string, number>>;
}

/** Acquire once for a loop; resolves to the release function, or `null` when it gave up. */
type Acquire = (end: number, signal: AbortSignal) => Promise<(() => Promise<unknown>) | null>;

/** One contender of a contention run. */
export interface Setup {
  readonly id: string;
  readonly library: string;
  readonly nodes: number;
  /** One `Acquire` per worker (shared state or not, as the library is meant to be used). */
  readonly workers: (count: number) => Promise<Acquire[]>;
  /** Node requests so far (monotonic counter). */
  readonly count: () => Promise<number>;
  readonly counting: ContentionRow["counting"];
  readonly close?: () => void;
  /** edgelock only: acquire rounds by result (from `onEvent`), since `reset`. */
  readonly rounds?: () => Record<string, number>;
  readonly reset?: () => void;
}

const UPSTASH_LOCK_DELAY = 100;
const REDLOCK_DELAY = 200;

/**
 * How the edgelock workers are set up: `shared`, one `Locks` for all (the callers of one isolate
 * or process: they line up locally and hand over); `clients`, one `Locks` per worker (independent
 * invocations, which only meet on the nodes: they wait in the nodes' queues and are handed the
 * key); `polling`, like `clients` over nodes given as a `RedisLike` without `subscribe`, which
 * cannot stream hand-offs, so the workers poll as edgelock 0.1 did (the baseline); `lambda`, a
 * fresh `createLocks` for every acquire (one per Lambda invocation: no stream or state survives
 * between two acquires of a worker).
 */
export type EdgelockMode = "shared" | "clients" | "polling" | "lambda";

/** A node as a plain `RedisLike` (`eval`/`evalsha` only): no `subscribe`, so its waiters poll. */
function pollingNode(node: DevNodeConfig): RedisLike {
  const client = edgelockLikeClient(node);
  return {
    eval: (script, keys, args) => client.eval(script, keys, args),
    evalsha: (sha1, keys, args) => client.evalsha(sha1, keys, args),
  };
}

/** edgelock on the first `n` nodes, in `mode`. */
export function edgelockSetup(
  cluster: BenchCluster,
  n: number,
  key: string,
  mode: EdgelockMode,
): Setup {
  const rounds: Record<string, number> = {};
  const nodes = cluster.nodes.slice(0, n);
  const inputs = mode === "polling" ? nodes.map(pollingNode) : nodes;
  const make = () =>
    createLocks({
      nodes: inputs,
      lease: LEASE,
      onEvent(event) {
        if (event.type === "acquire") rounds[event.result] = (rounds[event.result] ?? 0) + 1;
      },
    });
  const acquirer = (made: () => Locks): Acquire => {
    return async (end, signal) => {
      try {
        const lock = await made().acquire(key, {
          wait: Math.ceil(end - performance.now()) + 1_000,
          signal,
        });
        return () => lock.release();
      } catch (error) {
        if (signal.aborted) return null;
        throw error;
      }
    };
  };
  const once = (locks: Locks) => () => locks;
  const shared = mode === "shared" ? acquirer(once(make())) : undefined;
  const worker = () => acquirer(mode === "lambda" ? make : once(make()));
  return {
    id: mode === "shared" ? `edgelock-${n}` : `edgelock-${n}-${mode}`,
    library: "edgelock",
    nodes: n,
    counting: "endpoint requests",
    count: () => endpointRequests(cluster, n),
    workers: async (count) => Array.from({ length: count }, () => shared ?? worker()),
    reset: () => {
      for (const name of Object.keys(rounds)) delete rounds[name];
    },
    rounds: () => ({ ...rounds }),
  };
}

/** `@upstash/lock` on node 0, retrying with its default delay while the window lasts. */
export function upstashLockSetup(cluster: BenchCluster, key: string): Setup {
  const node0 = cluster.nodes[0];
  if (node0 === undefined) throw new Error("cluster has no node");
  const redis = edgelockLikeClient(node0) as unknown as ConstructorParameters<
    typeof UpstashLock
  >[0]["redis"];
  const acquire: Acquire = async (end) => {
    const left = end - performance.now();
    if (left <= 0) return null;
    // A Lock keeps its UUID on the instance: one instance per acquisition.
    const lock = new UpstashLock({ id: key, redis, lease: LEASE });
    const attempts = Math.ceil(left / UPSTASH_LOCK_DELAY) + 1;
    const ok = await lock.acquire({ retry: { attempts, delay: UPSTASH_LOCK_DELAY } });
    return ok ? () => lock.release() : null;
  };
  return {
    id: "upstash-lock",
    library: "@upstash/lock",
    nodes: 1,
    counting: "endpoint requests",
    count: () => endpointRequests(cluster, 1),
    workers: async (count) => Array.from({ length: count }, () => acquire),
  };
}

/**
 * node-redlock with its own connections per worker: 32 workers stand for 32 processes. (Sharing
 * one connection per node would serialize every worker's commands in the same order on every
 * node, which no set of independent clients gets, and would rule out split votes.)
 */
function redlockSetup(cluster: BenchCluster, n: number, key: string): Setup {
  const monitors = ioredisClients(cluster, n);
  const connections: IORedis[] = [...monitors];
  const worker = async (): Promise<Acquire> => {
    const clients = ioredisClients(cluster, n);
    connections.push(...clients);
    await Promise.all(clients.map((c) => c.ping()));
    const instance = new Redlock(clients);
    return async (end) => {
      const left = end - performance.now();
      if (left <= 0) return null;
      const retryCount = Math.max(0, Math.floor(left / REDLOCK_DELAY));
      try {
        const lock = await instance.acquire([key], LEASE, { retryCount });
        return () => lock.release();
      } catch (error) {
        if ((error as Error).name === "ExecutionError") return null;
        throw error;
      }
    };
  };
  return {
    id: `redlock-${n}`,
    library: "node-redlock",
    nodes: n,
    counting: "INFO commandstats",
    count: () => totalScriptCalls(monitors),
    workers: (count) => Promise.all(Array.from({ length: count }, worker)),
    close() {
      for (const client of connections) client.disconnect();
    },
  };
}

/** Raw samples of a contender, to merge its rounds. */
export interface Samples {
  readonly waits: number[];
  readonly gaps: number[];
}

/**
 * Run one contender for the window and count what it did; every wait and hand-off gap measured
 * is also pushed to `samples` when given (to merge rounds of one contender).
 */
export async function runOne(
  cluster: BenchCluster,
  setup: Setup,
  options: ContentionOptions,
  samples: Samples = { waits: [], gaps: [] },
): Promise<ContentionRow> {
  const { waits, gaps } = samples;
  try {
    const acquirers = await setup.workers(options.workers);
    // Warm up: scripts cached on every node, connections open.
    for (const acquire of acquirers) {
      const release = await acquire(performance.now() + 5_000, new AbortController().signal);
      await release?.();
    }
    await settle(cluster);
    await resetEndpointStats(cluster);
    setup.reset?.();
    const before = await setup.count();

    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const cpu = process.cpuUsage();
    const start = performance.now();
    const end = start + options.durationMs;
    const stop = new AbortController();
    // Every worker's acquire listens to the one window signal.
    setMaxListeners(4 * options.workers, stop.signal);
    const timer = setTimeout(() => stop.abort(new Error("window over")), options.durationMs);
    const first = waits.length;
    const firstGap = gaps.length;
    let releasedAt: number | undefined;
    let heldMs = 0;
    let firstGrant: number | undefined;
    let sections = 0;
    let errors = 0;
    let inside = 0;
    let overlaps = 0;
    const work = async (acquire: Acquire): Promise<void> => {
      let waitStart: number | undefined;
      while (performance.now() < end) {
        waitStart ??= performance.now();
        let release: (() => Promise<unknown>) | null;
        try {
          release = await acquire(end, stop.signal);
        } catch {
          errors++;
          await sleep(10);
          continue;
        }
        // Gave up (a peer's retries ran out): keep waiting while the window lasts.
        if (release === null) continue;
        const grantedAt = performance.now();
        if (grantedAt > end) {
          await release().catch(() => errors++);
          break;
        }
        waits.push(grantedAt - waitStart);
        firstGrant ??= grantedAt - start;
        waitStart = undefined;
        if (inside > 0) overlaps++;
        else if (releasedAt !== undefined) gaps.push(grantedAt - releasedAt);
        releasedAt = undefined;
        inside++;
        await sleep(options.holdMs);
        inside--;
        sections++;
        releasedAt = performance.now();
        heldMs += releasedAt - grantedAt;
        await release().catch(() => errors++);
      }
      // Still waiting when the window ended: its elapsed wait is a lower bound.
      if (waitStart !== undefined) waits.push(end - waitStart);
    };
    await Promise.all(acquirers.map(work));
    const used = process.cpuUsage(cpu);
    const ranMs = performance.now() - start;
    loop.disable();
    clearTimeout(timer);
    await settle(cluster);
    await sleep(50);
    const nodeRequests = (await setup.count()) - before;
    return {
      id: setup.id,
      library: setup.library,
      nodes: setup.nodes,
      counting: setup.counting,
      sections,
      sectionsPerSecond: sections / (options.durationMs / 1_000),
      nodeRequests,
      requestsPerSection: sections === 0 ? Number.POSITIVE_INFINITY : nodeRequests / sections,
      wait: summarize(waits.slice(first)),
      gap: summarize(gaps.slice(firstGap)),
      holdMeanMs: sections === 0 ? Number.NaN : heldMs / sections,
      benchCpu: (used.user + used.system) / 1_000 / ranMs,
      loopDelayP99Ms: loop.percentile(99) / 1e6,
      firstGrantMs: firstGrant ?? Number.NaN,
      errors,
      overlaps,
      ...(setup.rounds === undefined ? {} : { acquireRounds: setup.rounds() }),
    };
  } finally {
    setup.close?.();
  }
}

const EDGELOCK_MODES: readonly EdgelockMode[] = ["shared", "clients", "polling"];

/**
 * Run `@upstash/lock` and edgelock (1 node), then node-redlock and edgelock (5 nodes), edgelock in
 * every {@link EdgelockMode}, each on its own fresh key.
 *
 * @example
 * const rows = await runContention(cluster, { workers: 32, holdMs: 2, durationMs: 5_000 });
 */
export async function runContention(
  cluster: BenchCluster,
  options: ContentionOptions,
): Promise<ContentionRow[]> {
  const n = cluster.nodes.length;
  const key = (id: string) => `bench:contention:${id}:${crypto.randomUUID()}`;
  const setups: (() => Setup)[] = [
    () => upstashLockSetup(cluster, key("upstash-lock")),
    ...EDGELOCK_MODES.map((mode) => () => edgelockSetup(cluster, 1, key("edgelock-1"), mode)),
    () => redlockSetup(cluster, n, key(`redlock-${n}`)),
    ...EDGELOCK_MODES.map((mode) => () => edgelockSetup(cluster, n, key(`edgelock-${n}`), mode)),
  ];
  const rows: ContentionRow[] = [];
  for (const make of setups) {
    rows.push(await runOne(cluster, make(), options));
    await sleep(200);
  }
  return rows;
}
