/**
 * `lock.release({ settled: true })` against a real dev cluster: it resolves only once every node
 * answered the release or its request timed out (not at the majority that decides the result, as
 * the default release does), shares the one release with `release()`, and refuses bad options
 * with a `ConfigurationError` naming the option before anything is sent.
 */
import { afterEach, describe, expect, it } from "vitest";
import { isConfigurationError } from "../../src/errors";
import { createLocks, type LockEvent, type ReleaseResult } from "../../src/index";
import { complete } from "../../src/lock/handle";
import { useDevCluster } from "../support/dev-cluster";
import {
  evalCalls,
  eventually,
  landed,
  pttlBack,
  quietThenReset,
  readBack,
  requests,
  resetCluster,
  sleep,
  uniquePrefix,
} from "./helpers";

const N = 3;
const SLOW = 2; // the node whose next request is held back
const dev = useDevCluster({ nodes: N });

afterEach(() => resetCluster(dev.cluster));

function setup(name: string, requestTimeout = 2_000) {
  resetCluster(dev.cluster);
  const prefix = uniquePrefix(`settled-${name}`);
  const events: LockEvent[] = [];
  const locks = createLocks({
    nodes: dev.cluster.nodes,
    prefix,
    lease: 10_000,
    requestTimeout,
    onEvent: (event) => events.push(event),
  });
  return { locks, events, full: `${prefix}k` };
}

/** Script calls each node's redis-server has run so far. */
const scriptCalls = () => Promise.all(Array.from({ length: N }, (_, i) => evalCalls(dev, i)));

/** Hold the slow node's next request `ms` before it runs. */
const slowNext = (ms: number) =>
  dev.cluster.controls[SLOW]?.inject({ kind: "latency", ms, count: 1 });

describe("release({ settled: true })", () => {
  it("resolves only after the slow node answered: every node ran the release, the key is gone on all", async () => {
    const { locks, full } = setup("slow");
    const lock = await locks.acquire("k");
    await eventually(async () => (await readBack(dev, N, full)).every((v) => v === lock.token));
    const before = await scriptCalls();
    slowNext(300); // well inside the 2 s request timeout: it answers, late
    const result = await lock.release({ settled: true });
    // Read at once: nothing is left on any node, and each ran exactly one script (the release).
    expect(await readBack(dev, N, full)).toEqual([null, null, null]);
    const after = await scriptCalls();
    expect(after.map((calls, i) => calls - (before[i] as number))).toEqual([1, 1, 1]);
    expect(result.status).toBe("released");
  });

  it("the default release resolves at the majority, before the slow node ran its request", async () => {
    const { locks, full } = setup("default");
    const lock = await locks.acquire("k");
    await eventually(async () => (await readBack(dev, N, full)).every((v) => v === lock.token));
    const before = await scriptCalls();
    slowNext(300);
    const result = await lock.release();
    expect(result.status).toBe("released");
    const after = await scriptCalls();
    expect(after.map((calls, i) => calls - (before[i] as number))).toEqual([1, 1, 0]);
    expect(await readBack(dev, N, full)).toEqual([null, null, lock.token]);
    // The slow node's release still lands, after the call returned.
    await eventually(async () => (await readBack(dev, N, full)).every((v) => v === null));
  });

  it("with a node slower than the request timeout, it resolves once that request timed out", async () => {
    const { locks, full } = setup("bound", 2_000);
    const lock = await locks.acquire("k");
    await eventually(async () => (await readBack(dev, N, full)).every((v) => v === lock.token));
    slowNext(6_000); // held back past the 2 s timeout: the bound ends the wait, not an answer
    let settledDone = false;
    const settled = lock.release({ settled: true }).then((r) => {
      settledDone = true;
      return r;
    });
    const plain = await lock.release();
    // The majority decided the default release; the settled one still waits for the slow node.
    await sleep(200);
    expect(settledDone).toBe(false);
    const result = await settled;
    // It did not wait for an answer: the slow node has not run the release yet and still holds
    // our token, with its TTL running.
    expect(await readBack(dev, N, full)).toEqual([null, null, lock.token]);
    const [, , pttl] = await pttlBack(dev, N, full);
    expect(pttl).toBeGreaterThan(0);
    // One release, one result: the settled call only waited longer.
    expect(result).toEqual(plain);
    expect(result.status).toBe("released");
  });

  it("shares the one release with release(): N requests, one release event, the same result", async () => {
    const { locks, events, full } = setup("shared");
    const lock = await locks.acquire("k");
    await eventually(async () => (await readBack(dev, N, full)).every((v) => v === lock.token));
    await quietThenReset(dev.cluster);
    slowNext(200);
    const results: ReleaseResult[] = await Promise.all([
      lock.release(),
      lock.release({ settled: true }),
      lock.release({ settled: false }),
      lock.release({ settled: true }),
    ]);
    expect(await landed(dev.cluster, N)).toBe(N);
    for (const result of results) expect(result).toEqual(results[0]);
    expect(events.filter((e) => e.type === "release")).toHaveLength(1);
    expect(await readBack(dev, N, full)).toEqual([null, null, null]);
  });

  it("after ticket() it resolves with handed-on and sends nothing", async () => {
    const { locks, full } = setup("ticket");
    const lock = await locks.acquire("k");
    await lock.ticket();
    await quietThenReset(dev.cluster);
    const result = await lock.release({ settled: true });
    expect(result).toEqual({ status: "handed-on", outcomes: [] });
    expect(requests(dev.cluster)).toBe(0);
    expect(await readBack(dev, N, full)).toEqual([lock.token, lock.token, lock.token]);
  });

  it("after a completion it resolves once every node ran COMPLETE: the marker is on all", async () => {
    const { locks, full } = setup("complete");
    const lock = await locks.acquire("k");
    await eventually(async () => (await readBack(dev, N, full)).every((v) => v === lock.token));
    slowNext(300);
    const completing = complete(lock, 60_000);
    const result = await lock.release({ settled: true });
    expect((await completing).recorded).toBe(true);
    expect(result.status).toBe("released");
    const marker = `done:${lock.token}`;
    expect(await readBack(dev, N, full)).toEqual([marker, marker, marker]);
  });

  it.each([
    ["settled", { settled: "yes" }],
    ["settled", { settled: 1 }],
    ["settled", { settled: null }],
    ["setled", { setled: true }],
    ["options", null],
    ["options", "settled"],
    ["options", true],
    ["options", []],
    ["options", new Map()],
  ])(
    "refuses a bad option with a ConfigurationError naming %s, before anything is sent",
    async (option, options) => {
      const { locks, full } = setup("bad");
      const lock = await locks.acquire("k");
      await eventually(async () => (await readBack(dev, N, full)).every((v) => v === lock.token));
      await quietThenReset(dev.cluster);
      // biome-ignore lint/suspicious/noExplicitAny: bad input on purpose
      const error = await lock.release(options as any).catch((e: unknown) => e);
      expect(isConfigurationError(error)).toBe(true);
      expect(error).toMatchObject({ option });
      // Nothing was sent, and the lock is still held and unaborted.
      expect(requests(dev.cluster)).toBe(0);
      expect(lock.signal.aborted).toBe(false);
      expect(await readBack(dev, N, full)).toEqual([lock.token, lock.token, lock.token]);
      expect((await lock.release({ settled: true })).status).toBe("released");
    },
  );
});
