/**
 * The wait queue on Workers at 5 nodes, inside workerd with real request contexts
 * (`queue.worker.ts`, bundled with esbuild and run by Miniflare; every `dispatchFetch` is a request
 * of its own, and every request builds its own `Locks`, as independent isolates would):
 *
 * - a waiting request stays within the six connections Workers allow a request to have *waiting
 *   for response headers* (an open SSE stream whose headers arrived does not count; workerd does
 *   not enforce the limit, so the Worker counts its own fetches: see the worker's header);
 * - a waiting request whose context ends leaves nothing behind: its streams end with it, its
 *   record is dropped by the next hand-off (PUBLISH = 0) or by its deadline, and the next waiter
 *   is still handed the key.
 *
 * The holders are clients in this Node process: their requests are not the measured request's.
 */
import { describe, expect, it } from "vitest";
import { createLocks } from "../../src";
import { useDevCluster } from "../support/dev-cluster";
import { useWorker } from "./support/worker";

const N = 5;
/** Workers' limit of simultaneous connections waiting for headers, per request. */
const CONNECTIONS = 6;
/** A waiter's refresh period: long, so that only a hand-off can grant within a test. */
const CHECK_EVERY_MS = 30_000;
const dev = useDevCluster({ nodes: N });
const prefix = `mf-queue:${crypto.randomUUID()}:`;

const worker = useWorker(new URL("./queue.worker.ts", import.meta.url), () => ({
  EDGELOCK_NODES: JSON.stringify(dev.cluster.nodes.map(({ url, token }) => ({ url, token }))),
  LOCK_PREFIX: prefix,
  // The dev nodes run in this test process; a loaded machine must not turn into timeouts.
  REQUEST_TIMEOUT_MS: "1000",
  CHECK_EVERY_MS: String(CHECK_EVERY_MS),
}));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A client of this process (another isolate, as far as the Worker is concerned). */
const holderLocks = () =>
  createLocks({
    nodes: dev.cluster.nodes.map(({ url, token }) => ({ url, token })),
    prefix,
    requestTimeout: 1_000,
  });

interface Waited {
  readonly status: string;
  readonly order?: number;
  readonly attempt?: number;
  readonly peak: number;
  readonly atPeak: readonly string[];
  readonly crowds?: readonly string[][];
  readonly events: readonly string[];
}

/** Per node: the waiters' records in `key`'s room (the hash's fields but `^`). */
async function records(key: string): Promise<string[][]> {
  return Promise.all(
    Array.from({ length: N }, async (_, i) => {
      const fields = await dev.direct(i).hkeys(`${prefix}${key}:wait`);
      return fields.filter((f) => f !== "^");
    }),
  );
}

/** Per node: the hand-off channels of `key` somebody listens on. */
async function listening(key: string): Promise<number[]> {
  return Promise.all(
    Array.from({ length: N }, async (_, i) => {
      const channels = (await dev.direct(i).pubsub("CHANNELS", `${prefix}${key}:wait:*`)) as [];
      return channels.length;
    }),
  );
}

/** Until `check` holds (polled from this process, never from the waiters), at most `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`never: ${what}`);
    await sleep(20);
  }
}

/** `count` waiters registered on every node, each listening there. */
const queued = (key: string, count: number) =>
  until(`${count} waiters queued on every node`, async () => {
    const [rooms, channels] = await Promise.all([records(key), listening(key)]);
    return rooms.every((r) => r.length === count) && channels.every((c) => c === count);
  });

describe("the wait queue on Workers, 5 nodes", () => {
  it("a queued waiter is handed the key with at most 6 fetches waiting for headers", async () => {
    const key = `peak:${crypto.randomUUID()}`;
    const holder = await holderLocks().acquire(key, { lease: 30_000 });
    await worker.mf.dispatchFetch("http://worker.test/peak", { method: "DELETE" });
    const response = worker.mf.dispatchFetch(`http://worker.test/wait/${key}?wait=20000&hold=50`, {
      method: "POST",
    });
    await queued(key, 1);
    await sleep(100);
    expect((await holder.release()).status).toBe("released");
    const waited = (await (await response).json()) as Waited;
    console.log(
      `5 nodes: peak ${waited.peak} fetches waiting for headers: ${waited.atPeak.join(", ")}; events ${waited.events.join(", ")}`,
    );
    const crowds = waited.crowds ?? [];
    console.log(`moments with more than 5:\n${crowds.map((c) => `  ${c.join(", ")}`).join("\n")}`);
    expect(waited.status).toBe("released");
    // The first look, then one registration: handed the key, not a refresh (30 s away); released
    // before half the hand-off TTL, so no extension.
    expect(waited.events).toEqual([
      "acquire busy 0",
      "acquire busy 1",
      "acquire granted 1",
      "release",
    ]);
    // 7 before two changes, at either of two moments: (1) the refused first round was decided at
    // 3 of 5 answers and the 5 streams opened while its 2 other requests still waited for headers;
    // (2) a hand-off counted at 3 of 5 sent LEAVE to the other 2 beside an immediate EXTEND on all
    // 5. The streams now open once that round settled, and a handed lock extends halfway through
    // its hand-off TTL, not at once: 5.
    expect(waited.peak).toBeLessThanOrEqual(CONNECTIONS);
  });

  it("a waiting request that ends leaves nothing behind: the next waiter is handed the key", async () => {
    const key = `ended:${crypto.randomUUID()}`;
    const holder = await holderLocks().acquire(key, { lease: 30_000 });
    const ended = await worker.mf.dispatchFetch(
      `http://worker.test/abandon/${key}?wait=20000&settle=300`,
      {
        method: "POST",
      },
    );
    expect(await ended.json()).toEqual({ events: ["acquire busy 0", "acquire busy 1"] });
    // Registered everywhere before its request ended; its streams end with the request.
    expect((await records(key)).map((r) => r.length)).toEqual(Array(N).fill(1));
    await until("the ended request's streams closed", async () =>
      (await listening(key)).every((c) => c === 0),
    );
    const [gone] = (await records(key))[0] ?? [];
    const response = worker.mf.dispatchFetch(`http://worker.test/wait/${key}?wait=20000`, {
      method: "POST",
    });
    await until("the next waiter queued behind it", async () => {
      const [rooms, channels] = await Promise.all([records(key), listening(key)]);
      return rooms.every((r) => r.length === 2) && channels.every((c) => c === 1);
    });
    expect((await holder.release()).status).toBe("released");
    const waited = (await (await response).json()) as Waited;
    // Handed at the release (PUBLISH = 0 skipped the ended waiter), not found by a refresh.
    expect(waited.events).toEqual([
      "acquire busy 0",
      "acquire busy 1",
      "acquire granted 1",
      "release",
    ]);
    for (const room of await records(key)) expect(room).not.toContain(gone);
    expect((await records(key)).flat()).toEqual([]);
    // Its streams ended with its request, quietly: no stream reader error, no cross-request I/O.
    expect(worker.output()).not.toMatch(/Stream reading error|different request context/i);
  });

  it("an ended waiter's record goes at its deadline even when nobody is handed the key", async () => {
    const key = `deadline:${crypto.randomUUID()}`;
    const holder = await holderLocks().acquire(key, { lease: 30_000 });
    await worker.mf.dispatchFetch(`http://worker.test/abandon/${key}?wait=1000&settle=300`, {
      method: "POST",
    });
    expect((await records(key)).map((r) => r.length)).toEqual(Array(N).fill(1));
    await sleep(1_200);
    // The release serves the room: the record past its deadline is dropped, nobody is handed.
    expect((await holder.release()).status).toBe("released");
    expect((await records(key)).flat()).toEqual([]);
    const { nodes } = await holderLocks().inspect(key);
    expect(nodes.map((n) => n.status)).toEqual(Array(N).fill("absent"));
  });
});
