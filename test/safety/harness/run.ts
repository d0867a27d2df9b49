/**
 * One complete safety run: a lock cluster (5 nodes by default) and a separate protected resource,
 * a seeded fault schedule played against the lock cluster, clients contending for a few keys (in
 * this process, or in several child processes), then the after-run checks (leftover keys, the
 * resource's final state) and the checker. Used by the bounded tests in `test/safety/*.test.ts`
 * and by `scripts/chaos.ts` for long runs.
 *
 * @module
 */

import { setMaxListeners } from "node:events";
import { Redis } from "ioredis";
import { type DevCluster, startDevCluster } from "../../../src/dev/index";
import { createLocks } from "../../../src/index";
import { type CheckResult, checkHistory } from "./checker";
import { ClientProcess } from "./child-process";
import { type ClientsConfig, type ClientsResult, runClients } from "./clients";
import type { History, Leftover } from "./history";
import { FaultInjector } from "./injector";
import { derive } from "./random";
import { ProtectedResource } from "./resource";
import { buildSchedule, type FaultEvent, type FaultKind, type Profile } from "./schedule";

/** Options of {@link runChaos}. */
export interface RunOptions {
  readonly seed: number;
  /** How long the clients contend (faults fall inside this window). */
  readonly durationMs: number;
  /** Clients per process. */
  readonly clients: number;
  /** Client processes; 0 = run the clients in this process. */
  readonly processes: number;
  readonly keys: number;
  readonly lease: number;
  readonly profile: Profile;
  /** Lock cluster size. @default 5 */
  readonly nodes?: number;
  readonly fencing: boolean;
  /**
   * Clients pass `wake: true`. Since the wait queue the option has no effect (every waiting client
   * queues, with a stream per node); kept so old replay lines still parse. @default false
   */
  readonly wake?: boolean;
  /** Per-node request timeout (default: the library's). */
  readonly requestTimeout?: number;
  /** Progress lines. */
  readonly log?: (line: string) => void;
}

/** Everything a run produced. */
export interface RunReport {
  readonly options: RunOptions;
  readonly schedule: readonly FaultEvent[];
  readonly injected: Partial<Record<FaultKind, number>>;
  readonly skipped: Partial<Record<FaultKind, number>>;
  readonly history: History;
  readonly check: CheckResult;
  readonly rounds: Record<string, number>;
  readonly failures: Record<string, number>;
  /** Exceptions nobody should see (library or harness bugs). */
  readonly crashes: readonly string[];
  /** A few distinct node errors behind failed acquire calls. */
  readonly nodeErrors: readonly string[];
  /** Wall time of the whole run, set-up and checks included. */
  readonly elapsedMs: number;
  /** `locks.inspect` of every key after the run: nodes that still report a holder. */
  readonly inspectHeld: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function merge(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

/** Lock keys (not fence counters) left on any node, read with ioredis directly. */
async function scanLeftovers(cluster: DevCluster, prefix: string): Promise<Leftover[]> {
  const found: Leftover[] = [];
  for (const control of cluster.controls) {
    const redis = new Redis(control.redisUrl, { maxRetriesPerRequest: 1 });
    redis.on("error", () => {});
    try {
      const keys = await redis.keys(`${prefix}*`);
      // Tombstones of failed rounds (`:void:<token>`) are no lock keys: they expire on their own.
      for (const key of keys.filter((k) => !k.endsWith(":fence") && !k.includes(":void:"))) {
        found.push({
          node: control.index,
          key: key.slice(prefix.length),
          pttl: await redis.pttl(key),
        });
      }
    } finally {
      redis.disconnect();
    }
  }
  return found;
}

/**
 * Run once and check. Never throws for a violation (they are in the report); throws only when the
 * run itself could not happen (a cluster failed to start).
 *
 * @example
 * const report = await runChaos({ seed: 1, durationMs: 10_000, clients: 8, processes: 0,
 *   keys: 3, lease: 1_000, profile: "keep-data", fencing: true });
 */
export async function runChaos(options: RunOptions): Promise<RunReport> {
  const began = performance.now();
  const log = options.log ?? (() => {});
  const nodes = options.nodes ?? 5;
  const persistence = options.profile === "delayed-empty" ? "none" : "aof";
  const cluster = await startDevCluster({
    nodes,
    persistence,
    seed: options.seed,
    backend: "redis",
  });
  const resourceCluster = await startDevCluster({ nodes: 1, backend: "redis" });
  const children: ClientProcess[] = [];
  try {
    const namespace = `chaos:${options.seed}:${derive(options.seed, performance.now())}:`;
    const keys = Array.from({ length: options.keys }, (_, i) => `k${i}`);
    const resourceUrl = (resourceCluster.controls[0] as { redisUrl: string }).redisUrl;
    const base: Omit<ClientsConfig, "source"> = {
      nodes: cluster.nodes,
      resourceUrl,
      namespace,
      keys,
      lease: options.lease,
      fencing: options.fencing,
      wake: options.wake ?? false,
      clients: options.clients,
      seed: options.seed,
      ...(options.requestTimeout === undefined ? {} : { requestTimeout: options.requestTimeout }),
    };
    const schedule = buildSchedule({
      seed: options.seed,
      durationMs: options.durationMs,
      nodes,
      lease: options.lease,
      profile: options.profile,
    });
    log(`cluster up (${nodes} nodes, ${persistence}); ${schedule.length} faults scheduled`);

    for (let i = 0; i < options.processes; i++) children.push(new ClientProcess());
    const offsets = await Promise.all(children.map((c) => c.sync()));
    const stop = new AbortController();
    // Every waiting acquire listens on this one signal (and removes its listener when done).
    setMaxListeners(0, stop.signal);
    const injector = new FaultInjector(cluster.controls, schedule);
    injector.start();
    for (const [i, c] of children.entries()) c.start({ ...base, source: `p${i + 1}` });
    const local =
      options.processes === 0 ? runClients({ ...base, source: "main" }, stop.signal) : undefined;
    const ticker = setInterval(() => log(`running… ${JSON.stringify(injector.injected)}`), 10_000);
    await sleep(options.durationMs);
    clearInterval(ticker);
    stop.abort(new Error("run stopped"));
    for (const c of children) c.stop();

    const results: ClientsResult[] = [];
    const clockError: Record<string, number> = { main: 0 };
    if (local !== undefined) results.push(await local);
    for (const [i, c] of children.entries()) {
      const r = await c.result(offsets[i] as Awaited<ReturnType<ClientProcess["sync"]>>);
      clockError[`p${i + 1}`] = r.clock.error;
      results.push(r);
    }
    await injector.finish();
    // Delayed requests may still land (latency faults run the command after the client gave up):
    // wait for the longest delay, then a full lease for whatever they set to expire.
    const drain = injector.maxLatencyMs + options.lease + 500;
    log(`clients stopped; waiting ${drain} ms for late requests and expiry`);
    await sleep(drain);

    const prefix = `${namespace}lock:`;
    const leftovers = await scanLeftovers(cluster, prefix);
    const inspector = createLocks({ nodes: cluster.nodes, prefix, lease: options.lease });
    let inspectHeld = 0;
    for (const key of keys) {
      const seen = await inspector.inspect(key);
      inspectHeld += seen.nodes.filter((o) => o.status === "held").length;
    }
    const resource = new ProtectedResource(resourceUrl, `${namespace}res:`);
    const state = await resource.state(keys).finally(() => resource.close());

    const history: History = {
      grants: results.flatMap((r) => r.grants),
      resource: state,
      wipes: injector.wipes,
      leftovers,
      clockError,
    };
    const rounds: Record<string, number> = {};
    const failures: Record<string, number> = {};
    for (const r of results) {
      merge(rounds, r.rounds);
      merge(failures, r.failures);
    }
    return {
      options,
      schedule,
      injected: injector.injected,
      skipped: injector.skipped,
      history,
      check: checkHistory(history),
      rounds,
      failures,
      crashes: results.flatMap((r) => r.crashes),
      nodeErrors: [...new Set(results.flatMap((r) => r.nodeErrors))].slice(0, 8),
      elapsedMs: performance.now() - began,
      inspectHeld,
    };
  } finally {
    for (const c of children) c.kill();
    await Promise.allSettled([cluster.stop(), resourceCluster.stop()]);
  }
}
