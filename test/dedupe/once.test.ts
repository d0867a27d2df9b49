/**
 * `once()` against a real dev cluster (1, 3 and 5 nodes): a job runs at most once per key, a failed
 * run leaves no marker, the marker's retention is read back from the nodes, COMPLETE failures
 * report `recorded: false`, and the uncontended cost is 2N node requests.
 */
import { describe, expect, it, vi } from "vitest";
import {
  budget,
  createLocks,
  isBudgetExhaustedError,
  isLockBusyError,
  isQuorumError,
  type Lock,
  type LockEvent,
  type OnceResult,
  once,
} from "../../src/index";
import { complete } from "../../src/lock/handle";
import {
  landed,
  pttlBack,
  readBack,
  requests,
  resetCluster,
  sleep,
  uniquePrefix,
} from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 5 });
const SIZES = [1, 3, 5] as const;
const quorumOf = (n: number) => Math.floor(n / 2) + 1;

/** A manager on the first `n` nodes with a fresh prefix, recording its events. */
function setup(n: number, name: string) {
  resetCluster(dev.cluster);
  const prefix = uniquePrefix(`once-${name}`);
  const events: LockEvent[] = [];
  const locks = createLocks({
    nodes: dev.cluster.nodes.slice(0, n),
    prefix,
    lease: 5_000,
    // Six simultaneous callers on a loaded machine can wait longer than the default 250 ms for
    // an answer: a QuorumError (no run), which is not what these tests are about.
    requestTimeout: 1_500,
    onEvent: (event) => events.push(event),
  });
  return { locks, prefix, events, full: (key: string) => `${prefix}${key}` };
}

/** Fail every script call (EVALSHA and EVAL) on nodes 0..count-1 with HTTP 500. */
function failScripts(count: number): void {
  for (const control of dev.cluster.controls.slice(0, count)) {
    control.inject({ kind: "status", status: 500, command: "evalsha" });
    control.inject({ kind: "status", status: 500, command: "eval" });
  }
}

describe.each(SIZES)("once() on %i node(s)", (n) => {
  it("runs, then skips a later call as done", async () => {
    const { locks, full } = setup(n, "ran-done");
    const job = vi.fn(async (lock: Lock) => lock.key);
    const first = await once(locks, "job", job);
    expect(first).toEqual({ status: "ran", value: "job", recorded: true });
    const second = await once(locks, "job", job);
    expect(second).toMatchObject({ status: "skipped", reason: "done" });
    expect(job).toHaveBeenCalledTimes(1);
    const values = await readBack(dev, n, full("job"));
    expect(values.filter((v) => v?.startsWith("done:")).length).toBeGreaterThanOrEqual(quorumOf(n));
  });

  it("runs the job exactly once under concurrent calls", async () => {
    const { locks } = setup(n, "concurrent");
    let runs = 0;
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        once(locks, "job", async () => {
          runs += 1;
          await sleep(100);
          return runs;
        }),
      ),
    );
    expect(runs).toBe(1);
    const ran = results.filter((r) => r.status === "ran");
    expect(ran).toEqual([{ status: "ran", value: 1, recorded: true }]);
    for (const r of results.filter((r) => r.status === "skipped")) {
      expect(["running", "done"]).toContain(r.status === "skipped" && r.reason);
    }
    // Whoever comes afterwards finds it done.
    expect(await once(locks, "job", async () => 99)).toMatchObject({ reason: "done" });
  });

  it("a throwing job leaves no marker: the error is rethrown and a retry runs", async () => {
    const { locks, full } = setup(n, "throws");
    const boom = new Error("job failed");
    await expect(
      once(locks, "job", async () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    // The release resolves at a majority; a slower node's delete may land a moment later.
    await vi.waitFor(async () =>
      expect(await readBack(dev, n, full("job"))).toEqual(Array(n).fill(null)),
    );
    const retry = await once(locks, "job", async () => "second try");
    expect(retry).toEqual({ status: "ran", value: "second try", recorded: true });
  });

  it("writes done:<token> with PX retention on the nodes", async () => {
    const { locks, full } = setup(n, "pttl");
    const retention = 60_000;
    let token = "";
    const started = performance.now();
    await once(
      locks,
      "job",
      (lock) => {
        token = lock.token;
      },
      { retention },
    );
    const pttls = await pttlBack(dev, n, full("job"));
    const elapsed = performance.now() - started;
    for (const pttl of pttls) {
      expect(pttl).toBeLessThanOrEqual(retention);
      expect(pttl).toBeGreaterThanOrEqual(retention - elapsed - 3);
    }
    expect(await readBack(dev, n, full("job"))).toEqual(Array(n).fill(`done:${token}`));
    // inspect() tells a finished job from a holder.
    const seen = await locks.inspect("job");
    expect(seen).toMatchObject({ held: false, done: true, retryAfter: undefined });
    expect(seen.nodes.map((o) => o.status)).toEqual(Array(n).fill("done"));
    for (const o of seen.nodes) expect(o.pttl).toBeLessThanOrEqual(retention);
  });

  it("recorded is false when COMPLETE fails on a majority; the value is still returned", async () => {
    const { locks, events } = setup(n, "unrecorded");
    const result = await once(locks, "job", async () => {
      // The acquire has happened: from now on a majority answers every script call with 500.
      failScripts(quorumOf(n));
      return "value";
    });
    expect(result).toEqual({ status: "ran", value: "value", recorded: false });
    expect(events.at(-1)).toMatchObject({ type: "complete", result: "unrecorded" });
    resetCluster(dev.cluster);
  });

  it("costs exactly 2N node requests uncontended (acquire + complete)", async () => {
    const { locks, cluster } = { ...setup(n, "cost"), cluster: dev.cluster };
    await once(locks, "warmup", () => undefined);
    // Each round is decided at a majority: count from zero once the last one has landed.
    await landed(cluster, 2 * n, n);
    resetCluster(cluster);
    await once(locks, "job", () => undefined);
    expect(await landed(cluster, 2 * n, n)).toBe(2 * n);
    // A skipped duplicate costs one round.
    resetCluster(cluster);
    await once(locks, "job", () => undefined);
    expect(await landed(cluster, n, n)).toBe(n);
  });

  it("a plain acquire on a finished job's key is busy (retryAfter = the marker's PTTL)", async () => {
    const { locks } = setup(n, "plain");
    const retention = 30_000;
    await once(locks, "job", () => undefined, { retention });
    const error = await locks.acquire("job").catch((e: unknown) => e);
    expect(isLockBusyError(error)).toBe(true);
    if (!isLockBusyError(error)) return;
    expect(error.outcomes.some((o) => o.status === "done")).toBe(true);
    expect(error.retryAfter).toBeLessThanOrEqual(retention);
    expect(error.retryAfter).toBeGreaterThan(retention - 5_000);
    expect(await locks.tryAcquire("job")).toBeNull();
    // Every round so far (once: 2N, acquire: N, tryAcquire: N) was decided at a majority: count
    // from zero once their last requests have landed, not while one is still on its way.
    await landed(dev.cluster, 4 * n, n);
    // Waiting cannot help while the marker outlives the wait: one round, then busy.
    resetCluster(dev.cluster);
    await expect(locks.acquire("job", { wait: 5_000 })).rejects.toMatchObject({
      name: "LockBusyError",
    });
    expect(await landed(dev.cluster, n, n)).toBe(n);
  });
});

describe("once() on 3 nodes", () => {
  const N = 3;

  it("skips as running while another holder has the key", async () => {
    const { locks } = setup(N, "running");
    const holder = await locks.acquire("job", { lease: 20_000 });
    const job = vi.fn();
    const result = await once(locks, "job", job);
    expect(result).toMatchObject({ status: "skipped", reason: "running" });
    expect(
      (result as Extract<OnceResult<unknown>, { status: "skipped" }>).retryAfter,
    ).toBeGreaterThan(10_000);
    expect(job).not.toHaveBeenCalled();
    await holder.release();
    expect(await once(locks, "job", () => "now")).toMatchObject({ status: "ran", value: "now" });
  });

  it("a marker on a minority of nodes blocks once it has answered: no grant is kept", async () => {
    const { locks, full, events } = setup(N, "minority");
    // Only node 0 recorded the run (COMPLETE failed on the others, their locks expired since).
    await dev.direct(0).set(full("job"), `done:${"0".repeat(32)}`, "PX", 60_000);
    // Nodes 1 and 2 answer later than node 0, so the marker is among the answers that decide.
    for (const i of [1, 2]) dev.cluster.controls[i]?.inject({ kind: "latency", ms: 50 });
    const error = await locks.acquire("job").catch((e: unknown) => e);
    expect(isLockBusyError(error)).toBe(true);
    const job = vi.fn();
    expect(await once(locks, "job", job)).toMatchObject({ status: "skipped", reason: "done" });
    expect(job).not.toHaveBeenCalled();
    expect(events.filter((e) => e.type === "acquire" && e.result === "granted")).toHaveLength(0);
    // The grants nodes 1 and 2 made were released.
    expect((await readBack(dev, N, full("job"))).slice(1)).toEqual([null, null]);
    resetCluster(dev.cluster);
  });

  it("simultaneous starts that split the nodes still run the job exactly once", async () => {
    const { locks } = setup(N, "split");
    // Jittered latency per request: concurrent starters reach the nodes in different orders, so a
    // round often splits with no majority for anyone (a plain tryAcquire then has no winner).
    for (const control of dev.cluster.controls) control.inject({ kind: "latency", ms: [0, 15] });
    try {
      for (let occurrence = 0; occurrence < 10; occurrence++) {
        let runs = 0;
        const results = await Promise.all(
          Array.from({ length: 6 }, () =>
            once(locks, `job-${occurrence}`, async () => {
              runs += 1;
              await sleep(20);
            }),
          ),
        );
        expect(runs).toBe(1);
        expect(results.filter((r) => r.status === "ran")).toHaveLength(1);
      }
    } finally {
      resetCluster(dev.cluster);
    }
  });

  it("runs again once the retention has passed", async () => {
    const { locks } = setup(N, "retention");
    expect(await once(locks, "job", () => 1, { retention: 200 })).toMatchObject({ status: "ran" });
    expect(await once(locks, "job", () => 2, { retention: 200 })).toMatchObject({
      reason: "done",
    });
    await sleep(400);
    expect(await once(locks, "job", () => 3, { retention: 200 })).toMatchObject({
      status: "ran",
      value: 3,
    });
  });

  it("keeps the lock past its lease while the job runs (auto-extension), then records it", async () => {
    const { locks, events, full } = setup(N, "long");
    const result = await once(
      locks,
      "job",
      async (lock) => {
        await sleep(2_500);
        return lock.signal.aborted;
      },
      { lease: 1_000 },
    );
    expect(result).toEqual({ status: "ran", value: false, recorded: true });
    expect(events.some((e) => e.type === "extend" && e.result === "extended")).toBe(true);
    const values = await readBack(dev, N, full("job"));
    expect(values.every((v) => v?.startsWith("done:"))).toBe(true);
  });

  it("a job that released its own lock is still recorded", async () => {
    const { locks, full } = setup(N, "self-release");
    const result = await once(locks, "job", async (lock) => {
      await lock.release();
      return "ok";
    });
    expect(result).toEqual({ status: "ran", value: "ok", recorded: true });
    const values = await readBack(dev, N, full("job"));
    expect(values.every((v) => v?.startsWith("done:"))).toBe(true);
  });

  it("never overwrites another holder: a lost lock whose key was taken over is not recorded", async () => {
    const { locks, prefix, full } = setup(N, "taken-over");
    // Another client of the same namespace (its own manager, as another invocation would have).
    const other = createLocks({ nodes: dev.cluster.nodes.slice(0, N), prefix });
    let thief: Lock | undefined;
    const result = await once(locks, "job", async () => {
      // An operator deletes the key mid-run and another run takes it.
      await locks.forceRelease("job");
      thief = await other.acquire("job", { lease: 20_000 });
      return "finished";
    });
    expect(result).toEqual({ status: "ran", value: "finished", recorded: false });
    expect(await readBack(dev, N, full("job"))).toEqual(Array(N).fill(thief?.token));
    await thief?.release();
  });

  it("after completion, release() sends nothing and reports the completion", async () => {
    const { locks } = setup(N, "release-after");
    let held: Lock | undefined;
    await once(locks, "job", (lock) => {
      held = lock;
    });
    await landed(dev.cluster, 2 * N, N); // acquire + complete, decided at a majority
    resetCluster(dev.cluster);
    await expect(held?.release()).resolves.toMatchObject({ status: "released" });
    expect(requests(dev.cluster, N)).toBe(0);
  });

  it("complete() during an in-flight extension, then release({ settled }): both settle, marker written everywhere", async () => {
    const { locks, full } = setup(N, "complete-race");
    const lock = await locks.acquire("job");
    for (const control of dev.cluster.controls) control.inject({ kind: "latency", ms: 100 });
    const extending = lock.extend();
    const completing = complete(lock, 60_000);
    // `settled`: the completion is decided at a majority; this waits for its every answer.
    const releasing = lock.release({ settled: true });
    const [extended, completed, released] = await Promise.all([extending, completing, releasing]);
    resetCluster(dev.cluster);
    expect(extended.validUntil).toBeGreaterThan(Date.now());
    expect(completed.recorded).toBe(true);
    expect(released.status).toBe("released");
    expect(await readBack(dev, N, full("job"))).toEqual(Array(N).fill(`done:${lock.token}`));
  });

  it("propagates QuorumError without running the job", async () => {
    const { locks } = setup(N, "quorum");
    failScripts(2);
    const job = vi.fn();
    const error = await once(locks, "job", job).catch((e: unknown) => e);
    resetCluster(dev.cluster);
    expect(isQuorumError(error)).toBe(true);
    expect(job).not.toHaveBeenCalled();
  });

  it("propagates BudgetExhaustedError before calling any node", async () => {
    const { locks } = setup(N, "budget");
    const job = vi.fn();
    const error = await once(locks, "job", job, { budget: budget.within(0, { margin: 0 }) }).catch(
      (e: unknown) => e,
    );
    expect(isBudgetExhaustedError(error)).toBe(true);
    expect(job).not.toHaveBeenCalled();
    expect(requests(dev.cluster, N)).toBe(0);
  });

  it("an aborted signal rejects with its reason; the job never starts", async () => {
    const { locks } = setup(N, "signal");
    const reason = new Error("shutting down");
    const job = vi.fn();
    await expect(once(locks, "job", job, { signal: AbortSignal.abort(reason) })).rejects.toBe(
      reason,
    );
    expect(job).not.toHaveBeenCalled();
  });

  it("an array of keys is a ConfigurationError before any request: a done marker is one key's", async () => {
    const { locks } = setup(N, "array");
    resetCluster(dev.cluster);
    const job = vi.fn();
    const error = await once(locks, ["x", "y"] as unknown as string, job).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ConfigurationError", option: "key" });
    expect((error as Error).message).toContain("once() takes one key");
    expect(job).not.toHaveBeenCalled();
    expect(requests(dev.cluster, N)).toBe(0);
  });
});
