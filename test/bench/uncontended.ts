/**
 * Section 1: uncontended acquire + release latency, every contender interleaved in one loop.
 *
 * | contender | what one operation is |
 * |---|---|
 * | `edgelock-N` | `locks.acquire(key)` then `lock.release()`, `createLocks({ nodes })` with defaults |
 * | `raw-N` | one parallel round of EVALSHA acquire, then one of EVALSHA release, same scripts, N clients set up like edgelock's own, no library (each round waits for all N) |
 * | `raw-N-quorum` | the same, each round resolving at the ⌊N/2⌋+1-th reply like edgelock's (informational) |
 * | `upstash-lock` | `new Lock({ id, redis, lease: 10000 })`, `acquire()` then `release()`; client set up like edgelock's |
 * | `upstash-lock-defaults` | the same with `new Redis({ url, token })` defaults (auto-pipelining, retries, telemetry); informational |
 * | `redlock-N` | node-redlock `acquire([key], 10000, { retryCount: 0 })` then `release()`, ioredis over TCP straight to the redis-servers (a different transport; reference only) |
 *
 * @module
 */
import { Lock as UpstashLock } from "@upstash/lock";
import type { Redis as IORedis } from "ioredis";
import Redlock from "redlock";
import { createLocks } from "../../src/index";
import { ACQUIRE, RELEASE, scriptKeys, tombstoneKey } from "../../src/scripts/index";
import { defaultClient, edgelockLikeClient, ioredisClients, randomToken, settle } from "./clients";
import type { BenchCluster } from "./cluster";
import { type Contender, interleave, type Summary, summarize } from "./stats";

/** Lease of every contender's grant, ms (edgelock's default). */
export const LEASE = 10_000;

export interface UncontendedRow {
  readonly id: string;
  readonly library: string;
  readonly transport: "REST (fetch)" | "TCP (ioredis)";
  readonly nodes: number;
  readonly summary: Summary;
  /** edgelock only: share of acquire rounds (warm-up included) in which a node reported a holder. */
  readonly roundsSeeingHolder?: number;
  /** Operations that threw during the recorded rounds (not sampled). */
  readonly errors: number;
  readonly lastError?: string;
}

export interface UncontendedResult {
  readonly rows: readonly UncontendedRow[];
  readonly rounds: number;
  readonly truncated: boolean;
}

export interface UncontendedOptions {
  readonly rounds: number;
  readonly warmup: number;
  readonly timeLimitMs: number;
  /** Node counts of the edgelock / raw / node-redlock contenders. */
  readonly nodeCounts: readonly number[];
}

interface Entry {
  readonly contender: Contender;
  /** edgelock only: acquire rounds, and those in which a node reported a holder. */
  readonly rounds?: { readonly total: number; readonly sawHeld: number };
  readonly library: string;
  readonly transport: UncontendedRow["transport"];
  readonly nodes: number;
}

function edgelock(cluster: BenchCluster, n: number): Entry {
  const rounds = { total: 0, sawHeld: 0 };
  const locks = createLocks({
    nodes: cluster.nodes.slice(0, n),
    lease: LEASE,
    // Acquire rounds in which some node still reported a holder: with one sequential client
    // that can only be this client's own previous grant whose release (decided at a majority)
    // had not reached that node yet.
    onEvent(event) {
      if (event.type !== "acquire") return;
      rounds.total++;
      if (event.outcomes.some((o) => o.status === "held")) rounds.sawHeld++;
    },
  });
  const key = `bench:u:edgelock:${n}`;
  return {
    library: "edgelock",
    transport: "REST (fetch)",
    nodes: n,
    rounds,
    contender: {
      id: `edgelock-${n}`,
      async run() {
        const lock = await locks.acquire(key);
        const { status } = await lock.release();
        if (status !== "released") throw new Error(`edgelock-${n}: release ${status}`);
      },
    },
  };
}

/**
 * Resolve once `k` of `promises` fulfilled with a value `counts` accepts (the rest keep running);
 * reject once that can no longer happen.
 */
function firstK<T>(
  promises: readonly Promise<T>[],
  k: number,
  counts: (value: T) => boolean,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let yes = 0;
    let no = 0;
    const vote = (ok: boolean, why: unknown) => {
      if (ok) yes++;
      else no++;
      if (yes === k) resolve();
      else if (no === promises.length - k + 1) reject(why);
    };
    for (const promise of promises) {
      promise.then(
        (value) => vote(counts(value), new Error(`unexpected reply ${JSON.stringify(value)}`)),
        (error: unknown) => vote(false, error),
      );
    }
  });
}

const isGranted = (reply: unknown) => Array.isArray(reply) && reply[0] === 1;

/**
 * One script call, sent once more if the first attempt failed at the network level (e.g. a
 * keep-alive connection the server closed just as it was reused), as edgelock's `evalScript`
 * does; both scripts are idempotent for a token.
 */
async function call(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // fetch failures are TypeErrors
    return run();
  }
}

/**
 * The raw floor: what N parallel script calls cost with no library around them. `quorum` false:
 * each round waits for every node (`Promise.all`, the floor the target is judged against);
 * `quorum` true: each round resolves at the ⌊N/2⌋+1-th reply, as edgelock's rounds do, so the
 * difference to edgelock is library overhead only (informational).
 */
function raw(cluster: BenchCluster, n: number, quorum: boolean): Entry {
  const clients = cluster.nodes.slice(0, n).map(edgelockLikeClient);
  const id = quorum ? `raw-${n}-quorum` : `raw-${n}`;
  const lock = `bench:u:${id}`;
  // The KEYS edgelock sends: the key, its fence counter and its queue (plus, for ACQUIRE, the
  // round's tombstone).
  const triple = [{ lock, fence: `${lock}:fence`, room: `${lock}:wait` }];
  const keys = scriptKeys(triple);
  const wait = quorum ? Math.floor(n / 2) + 1 : n;
  return {
    library: quorum ? "raw floor, early majority" : "raw floor",
    transport: "REST (fetch)",
    nodes: n,
    contender: {
      id,
      async run() {
        const token = randomToken();
        const acquireKeys = scriptKeys(triple, tombstoneKey(triple, token));
        const acquireArgs = ACQUIRE.args({ token, ttl: LEASE, fencing: false });
        // A round succeeds once `wait` nodes granted (every node when `wait` is N); the release
        // round once `wait` nodes answered.
        await firstK(
          clients.map((c) => call(() => c.evalsha(ACQUIRE.sha1, acquireKeys, acquireArgs))),
          wait,
          isGranted,
        );
        await firstK(
          clients.map((c) => call(() => c.evalsha(RELEASE.sha1, keys, [token]))),
          wait,
          (reply) => reply === 1 || reply === 0 || reply === -1,
        );
      },
    },
  };
}

function upstashLock(redis: UpstashLockRedis, id: string): Entry {
  const key = `bench:u:${id}`;
  return {
    library: "@upstash/lock",
    transport: "REST (fetch)",
    nodes: 1,
    contender: {
      id,
      async run() {
        const lock = new UpstashLock({ id: key, redis, lease: LEASE });
        if (!(await lock.acquire())) throw new Error(`${id}: not acquired`);
        if (!(await lock.release())) throw new Error(`${id}: not released`);
      },
    },
  };
}

type UpstashLockRedis = ConstructorParameters<typeof UpstashLock>[0]["redis"];

function redlock(clients: readonly IORedis[], n: number): Entry {
  const instance = new Redlock(clients.slice(0, n), { retryCount: 0 });
  const key = `bench:u:redlock:${n}`;
  return {
    library: "node-redlock",
    transport: "TCP (ioredis)",
    nodes: n,
    contender: {
      id: `redlock-${n}`,
      async run() {
        const lock = await instance.acquire([key], LEASE);
        await lock.release();
      },
    },
  };
}

/** Load the raw floor's scripts on every node (edgelock loads its own on first use). */
async function loadScripts(cluster: BenchCluster, n: number): Promise<void> {
  await Promise.all(
    cluster.nodes.slice(0, n).map(async (node) => {
      const client = edgelockLikeClient(node);
      await client.scriptLoad(ACQUIRE.lua);
      await client.scriptLoad(RELEASE.lua);
    }),
  );
}

/**
 * Interleave every contender for `rounds` recorded rounds after `warmup` rounds.
 *
 * @example
 * const { rows } = await runUncontended(cluster, { rounds: 1500, warmup: 150, timeLimitMs: 90_000, nodeCounts: [1, 3, 5] });
 */
export async function runUncontended(
  cluster: BenchCluster,
  options: UncontendedOptions,
): Promise<UncontendedResult> {
  const maxNodes = Math.max(...options.nodeCounts);
  await loadScripts(cluster, maxNodes);
  const tcp = ioredisClients(cluster, maxNodes);
  const node0 = cluster.nodes[0];
  if (node0 === undefined) throw new Error("cluster has no node");
  const entries: Entry[] = [
    upstashLock(edgelockLikeClient(node0) as unknown as UpstashLockRedis, "upstash-lock"),
    upstashLock(defaultClient(node0) as unknown as UpstashLockRedis, "upstash-lock-defaults"),
  ];
  for (const n of options.nodeCounts) {
    entries.push(edgelock(cluster, n));
    if (n > 1) entries.push(raw(cluster, n, false), raw(cluster, n, true));
    entries.push(redlock(tcp, n));
  }
  try {
    const result = await interleave(
      entries.map((e) => e.contender),
      options,
    );
    await settle(cluster);
    const rows = entries.map((e) => {
      const failed = result.errors.get(e.contender.id);
      return {
        id: e.contender.id,
        library: e.library,
        transport: e.transport,
        nodes: e.nodes,
        summary: summarize(result.samples.get(e.contender.id) ?? []),
        errors: failed?.count ?? 0,
        ...(failed === undefined ? {} : { lastError: failed.last }),
        ...(e.rounds === undefined || e.rounds.total === 0
          ? {}
          : { roundsSeeingHolder: e.rounds.sawHeld / e.rounds.total }),
      };
    });
    return { rows, rounds: result.rounds, truncated: result.truncated };
  } finally {
    for (const client of tcp) client.disconnect();
  }
}
