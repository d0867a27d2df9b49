/**
 * Load: 64 concurrent clients on 5 nodes for two bounded halves (~6 s each). The library must keep
 * working (mutual exclusion holds, only typed errors), crash nothing, and leave nothing behind:
 * no more pending timers and no abort listeners once every lock is released, and a heap that does
 * not grow from one half to the next.
 *
 * The dev cluster runs in a child process so that the endpoints' own sockets, timers and memory
 * stay out of what this process measures. The heap is compared after a forced GC (`gc` obtained
 * at run time through `v8.setFlagsFromString("--expose-gc")`, so no vitest `execArgv` change is
 * needed) with a generous ratio: allocation noise between two halves is a few MB, a per-operation
 * leak over ~thousands of operations is far more.
 */
import { type ChildProcess, fork } from "node:child_process";
import { getEventListeners, setMaxListeners } from "node:events";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createLocks, isLockBusyError, isQuorumError, type Locks } from "../../src/index";
import { CrashWatch } from "../security/support/inspect";
import { createRng } from "./harness/random";

const CLIENTS = 64;
const KEYS = Array.from({ length: 16 }, (_, i) => `key${i}`);
const HALF_MS = 6_000;

let child: ChildProcess;
let nodes: { url: string; token: string }[] = [];
let redisUrls: string[] = [];

beforeAll(async () => {
  child = fork(fileURLToPath(new URL("./harness/cluster-process.ts", import.meta.url)), ["5"], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await new Promise<{ nodes: typeof nodes; redisUrls: string[] }>(
    (resolve, reject) => {
      child.once("message", (m) => resolve(m as { nodes: typeof nodes; redisUrls: string[] }));
      child.once("exit", (code) => reject(new Error(`cluster process exited (${code})`)));
    },
  );
  nodes = ready.nodes;
  redisUrls = ready.redisUrls;
}, 30_000);

afterAll(async () => {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.send("stop");
  await exited;
});

function forceGc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Tally {
  ops: number;
  granted: number;
  busy: number;
  quorum: number;
  aborted: number;
  unexpected: string[];
  /** A key acquired while this process already held it. */
  doubleHolds: number;
}

/** Run CLIENTS clients for `ms`; resolves once every one of them has finished its last operation. */
async function half(locks: Locks, ms: number, seed: number, shared: AbortSignal): Promise<Tally> {
  const tally: Tally = {
    ops: 0,
    granted: 0,
    busy: 0,
    quorum: 0,
    aborted: 0,
    unexpected: [],
    doubleHolds: 0,
  };
  const held = new Set<string>();
  const enter = (key: string) => {
    if (held.has(key)) tally.doubleHolds += 1;
    held.add(key);
    tally.granted += 1;
  };
  const until = performance.now() + ms;
  const client = async (i: number) => {
    const rng = createRng(seed * 1_000 + i);
    while (performance.now() < until) {
      const key = rng.pick(KEYS);
      const op = rng.weighted({ using: 4, acquire: 3, try: 2, cancel: 1 });
      tally.ops += 1;
      try {
        if (op === "using") {
          await locks.using(
            key,
            async (lock) => {
              enter(key);
              await sleep(rng.int(1, 5));
              if (rng.chance(0.2)) await lock.extend();
              held.delete(key);
            },
            { wait: 2_000, signal: shared },
          );
        } else if (op === "acquire") {
          const lock = await locks.acquire(key, { wait: 1_000, signal: shared });
          enter(key);
          await sleep(rng.int(1, 5));
          held.delete(key);
          await lock.release();
        } else if (op === "try") {
          const lock = await locks.tryAcquire(key, { signal: shared });
          if (lock !== null) {
            enter(key);
            held.delete(key);
            await lock.release();
          }
        } else {
          // A caller that gives up waiting: the call rejects with its signal's reason.
          const cancel = AbortSignal.any([shared, AbortSignal.timeout(rng.int(1, 200))]);
          const lock = await locks
            .acquire(key, { wait: 5_000, signal: cancel })
            .catch((e: unknown) => {
              if ((e as Error)?.name === "TimeoutError") tally.aborted += 1;
              else throw e;
              return null;
            });
          if (lock !== null) {
            enter(key);
            held.delete(key);
            await lock.release();
          }
        }
      } catch (error) {
        if (isLockBusyError(error)) tally.busy += 1;
        else if (isQuorumError(error)) tally.quorum += 1;
        else tally.unexpected.push(String((error as Error)?.stack ?? error));
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  return tally;
}

it("64 clients on 5 nodes: keeps working, no timer, listener or memory growth", async () => {
  const gc = forceGc();
  const watch = new CrashWatch();
  watch.install();
  try {
    const prefix = `load:${crypto.randomUUID()}:`;
    const locks = createLocks({
      nodes,
      prefix,
      lease: 5_000,
      requestTimeout: 2_000,
      retryDelayMax: 200,
    });
    const shared = new AbortController();
    // Every waiting call listens on this one signal; they must all remove their listener.
    setMaxListeners(0, shared.signal);

    await half(locks, 1_500, 1, shared.signal); // warm-up: JIT, connection pools
    await sleep(300);
    gc();
    const timersBefore = timeouts();

    let timersDuring = 0;
    const sampler = setInterval(() => {
      timersDuring = Math.max(timersDuring, timeouts());
    }, 200);
    const first = await half(locks, HALF_MS, 2, shared.signal);
    clearInterval(sampler);
    await sleep(300);
    gc();
    const heapFirst = process.memoryUsage().heapUsed;
    const second = await half(locks, HALF_MS, 3, shared.signal);
    await sleep(300);
    gc();
    const heapSecond = process.memoryUsage().heapUsed;
    const timersAfter = timeouts();

    const summary = {
      first,
      second,
      timers: { before: timersBefore, duringMax: timersDuring, after: timersAfter },
      heapMB: {
        first: +(heapFirst / 2 ** 20).toFixed(1),
        second: +(heapSecond / 2 ** 20).toFixed(1),
      },
    };
    console.log(
      `load: ${JSON.stringify({ ...summary, first: { ...first, unexpected: first.unexpected.length }, second: { ...second, unexpected: second.unexpected.length } })}`,
    );

    for (const t of [first, second]) {
      expect(t.unexpected, JSON.stringify(summary)).toEqual([]);
      expect(t.doubleHolds).toBe(0);
      expect(t.granted).toBeGreaterThan(25);
    }
    // the measurement sees the library's timers while it works, and none are left afterwards
    expect(timersDuring).toBeGreaterThan(timersBefore);
    expect(timersAfter).toBeLessThanOrEqual(timersBefore + 1);
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
    // flat memory: the second half may not keep what the first half did not
    expect(heapSecond).toBeLessThan(heapFirst * 1.25 + 4 * 2 ** 20);
    // Every lock released: nothing left on any node once the background work landed. An aborted
    // caller's grant is released in the background, and a release may have reserved the key for a
    // waiter that gave up as it ran (until that waiter's poll time ends — retryDelayMax plus a
    // request timeout, 2.2 s — or its LEAVE lands). Wait up to 3 s, and say what was left: a
    // token nobody released would outlast that (lease 5 s).
    const leftovers = async () => {
      const seen: string[] = [];
      for (const url of redisUrls) {
        const redis = new Redis(url);
        try {
          for (const key of await redis.keys(`${prefix}*`)) {
            // Tombstones of failed rounds are no lock keys: they expire on their own.
            if (key.includes(":void:")) continue;
            const type = await redis.type(key);
            const value = type === "string" ? await redis.get(key) : type;
            seen.push(`${url} ${key} = ${value} (PTTL ${await redis.pttl(key)} ms)`);
          }
        } finally {
          redis.disconnect();
        }
      }
      return seen;
    };
    const early = await leftovers();
    if (early.length > 0) console.log(`left 300 ms after the run:\n${early.join("\n")}`);
    let left = early;
    for (let waited = 0; left.length > 0 && waited < 3_000; waited += 250) {
      await sleep(250);
      left = await leftovers();
    }
    expect(left).toEqual([]);
    expect(watch.problems).toEqual([]);
  } finally {
    watch.uninstall();
  }
}, 60_000);
