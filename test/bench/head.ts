/**
 * The WAN section's absent head: how long the key idles when the first waiter of the queue is
 * gone (docs/design/queue-handoff.md, "H6: streams"). A holder holds the key; a waiter in a child process
 * (head-child.ts) registers in every node's queue with its streams open and is then either
 * **frozen** (SIGSTOP: its streams stay open, so every node hands it the key and nobody counts it)
 * or **vanished** (SIGKILL: its streams close, so the nodes skip it); a second waiter, placed after
 * it, registers; the holder releases. Measured: from the release's start to the second waiter's
 * grant, against the documented bound for a frozen head, the hand-off TTL plus one refresh
 * interval (`handMs + retryDelayMax`).
 *
 * @module
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createLocks } from "../../src/index";
import { handMsFor } from "../../src/lock/wait/queued";
import { ioredisClients } from "./clients";
import type { BenchCluster } from "./cluster";
import { sleep } from "./stats";
import { LEASE } from "./uncontended";

export type HeadKind = "frozen" | "vanished";

export interface HeadRow {
  readonly kind: HeadKind;
  readonly nodes: number;
  /** Release start → the next waiter's grant, ms, one per repetition. */
  readonly idleMs: readonly number[];
  /** `handMs + retryDelayMax` for the bench's lease and the default options. */
  readonly boundMs: number;
  readonly handMs: number;
  readonly retryDelayMax: number;
}

/** edgelock's defaults the bound is made of (src/lock/options.ts). */
const RETRY_DELAY_MAX = 1_000;
const requestTimeout = (lease: number) =>
  Math.min(Math.floor(lease / 3), Math.max(250, Math.round(lease * 0.05)));

/** Resolve when every one of `n` nodes' queue for `key` has at least `members` waiters. */
async function queued(cluster: BenchCluster, n: number, key: string, members: number) {
  const clients = ioredisClients(cluster, n);
  try {
    const until = performance.now() + 10_000;
    while (performance.now() < until) {
      const lengths = await Promise.all(
        clients.map(async (c) => {
          const fields = await c.hkeys(`lock:${key}:wait`);
          return fields.filter((f) => f !== "^").length;
        }),
      );
      if (lengths.every((l) => l >= members)) return;
      await sleep(20);
    }
    throw new Error(`head: ${members} waiter(s) not registered on every node within 10 s`);
  } finally {
    for (const c of clients) c.disconnect();
  }
}

function startChild(cluster: BenchCluster, n: number, key: string): ChildProcess {
  const nodes = cluster.nodes.slice(0, n).map(({ url, token }) => ({ url, token }));
  return fork(
    fileURLToPath(new URL("./head-child.ts", import.meta.url)),
    [JSON.stringify({ nodes, key, lease: LEASE })],
    { stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
}

const message = (child: ChildProcess, type: string) =>
  new Promise<void>((resolve, reject) => {
    child.on("message", (m: { type: string; error?: string }) => {
      if (m.type === type) resolve();
      else reject(new Error(`head child: ${m.type} ${m.error ?? ""}`));
    });
    child.once("exit", (code) => reject(new Error(`head child exited (${code})`)));
  });

/** One measurement: release start → the next waiter's grant, ms. */
async function once(cluster: BenchCluster, n: number, kind: HeadKind): Promise<number> {
  const key = `bench:head:${kind}:${n}:${crypto.randomUUID()}`;
  const nodes = cluster.nodes.slice(0, n);
  const holder = createLocks({ nodes, lease: LEASE });
  const waiter = createLocks({ nodes, lease: LEASE });
  const held = await holder.acquire(key);
  const child = startChild(cluster, n, key);
  try {
    await message(child, "refused");
    await queued(cluster, n, key, 1);
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill(kind === "frozen" ? "SIGSTOP" : "SIGKILL");
    if (kind === "vanished") {
      await gone;
      await sleep(200); // the endpoints see the streams' sockets close
    }
    const granted = waiter.acquire(key, { wait: 30_000 });
    await queued(cluster, n, key, 2);
    const start = performance.now();
    await held.release();
    const lock = await granted;
    const idle = performance.now() - start;
    await lock.release();
    return idle;
  } finally {
    child.kill("SIGKILL");
  }
}

/**
 * Measure a frozen and a vanished head `times` each at every node count.
 *
 * @example
 * const rows = await runHead(cluster, { nodeCounts: [1, 3, 5], times: 2 });
 */
export async function runHead(
  cluster: BenchCluster,
  options: { readonly nodeCounts: readonly number[]; readonly times: number },
): Promise<HeadRow[]> {
  const handMs = handMsFor(LEASE, requestTimeout(LEASE));
  const rows: HeadRow[] = [];
  for (const nodes of options.nodeCounts) {
    for (const kind of ["vanished", "frozen"] as const) {
      const idleMs: number[] = [];
      for (let i = 0; i < options.times; i++) idleMs.push(await once(cluster, nodes, kind));
      rows.push({
        kind,
        nodes,
        idleMs,
        boundMs: handMs + RETRY_DELAY_MAX,
        handMs,
        retryDelayMax: RETRY_DELAY_MAX,
      });
    }
  }
  return rows;
}
