/**
 * `semaphore(locks, key, { permits })` against three redis-servers through the REST endpoint
 * (docs/design/semaphore.md, docs/SAFETY.md §4c): at most `permits` holders, each on its own slot,
 * with TTLs and tombstones read back from the nodes; an uncontended permit costs 2N requests; the
 * pigeonhole partition that breaks a per-node count grants at most `permits`; bad options are
 * refused by name before any request.
 */
import { afterEach, describe, expect, it } from "vitest";
import { isSemaphoreBusyError, type QuorumError } from "../../src/errors/index";
import { createLocks, isLockBusyError, type Locks } from "../../src/index";
import { type Permit, semaphore } from "../../src/semaphore/index";
import {
  landed,
  pttlBack,
  quietThenReset,
  readBack,
  resetCluster,
  sleep,
  uniquePrefix,
} from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const N = 3;
const dev = useDevCluster({ nodes: N });
afterEach(() => resetCluster(dev.cluster));

const make = (prefix: string, more: Record<string, unknown> = {}): Locks =>
  createLocks({
    ...{ nodes: dev.cluster.nodes, prefix, lease: 5_000, retryDelayMax: 100 },
    // Generous for a loaded machine: these tests count holders, not latency.
    ...{ requestTimeout: 1_500, ...more },
  });

/** The node indices holding `token` on `key`, read with ioredis. */
async function holders(key: string, token: string): Promise<number[]> {
  const values = await readBack(dev, N, key);
  return values.flatMap((v, i) => (v === token ? [i] : []));
}

describe("semaphore on three redis-servers", () => {
  it("grants at most `permits`, each on its own slot held on a majority, and frees a slot on release", async () => {
    const prefix = uniquePrefix("sem");
    const locks = make(prefix);
    const sem = semaphore(locks, "llm", { permits: 3 });
    const permits: Permit[] = [];
    for (let i = 0; i < 3; i++) permits.push(await sem.acquire());
    expect(permits.map((p) => p.slot).sort()).toEqual([0, 1, 2]);
    for (const p of permits) {
      const key = `${prefix}llm:permit:${p.slot}`;
      expect(p.keys).toEqual([`llm:permit:${p.slot}`]);
      expect((await holders(key, p.token)).length).toBeGreaterThanOrEqual(2);
      for (const pttl of await pttlBack(dev, N, key)) expect(pttl).toBeLessThanOrEqual(5_000);
    }
    expect(await sem.tryAcquire()).toBeNull();
    const busy = await sem.acquire().catch((e: unknown) => e);
    expect(isSemaphoreBusyError(busy)).toBe(true);
    expect(isLockBusyError(busy)).toBe(true);
    expect(busy).toMatchObject({ permits: 3, held: 3, key: "llm" });
    expect((busy as { retryAfter: number }).retryAfter).toBeGreaterThan(0);
    expect((busy as Error).message).toMatch(/^semaphore "llm" is at capacity: 3 of 3 permits held/);
    const seen = await sem.inspect();
    expect(seen).toMatchObject({ key: "llm", permits: 3, held: 3, free: 0 });
    expect(seen.retryAfter).toBeGreaterThan(0);

    const first = permits[0] as Permit;
    expect((await first.release()).status).toBe("released");
    const key = `${prefix}llm:permit:${first.slot}`;
    expect(await holders(key, first.token)).toEqual([]);
    // The call's tombstone (L3): a late look of the released call places nothing.
    const tomb = await pttlBack(dev, N, `${prefix}llm:permits:void:${first.token}`);
    for (const pttl of tomb) expect(pttl).toBeGreaterThan(0);
    const again = await sem.tryAcquire();
    expect(again?.slot).toBe(first.slot);
    expect((await sem.inspect()).free).toBe(0);
    for (const p of [...permits.slice(1), again as Permit]) await p.release();
    expect(await sem.inspect()).toMatchObject({ held: 0, free: 3, retryAfter: 0 });
  });

  it("inspect() with a majority of nodes failing tells nothing is free: held 0, free 0, retryAfter undefined", async () => {
    const prefix = uniquePrefix("sem-inspect-down");
    const sem = semaphore(make(prefix), "d", { permits: 2 });
    const permits = [await sem.acquire(), await sem.acquire()];
    for (const i of [0, 1]) dev.cluster.controls[i]?.inject({ kind: "status", status: 502 });
    const seen = await sem.inspect();
    // Node 2 holds both slots, and two nodes said nothing: no slot is known held or free.
    expect(seen).toMatchObject({ held: 0, free: 0, retryAfter: undefined });
    expect(seen.slots.map((s) => [s.held, s.free])).toEqual([
      [false, false],
      [false, false],
    ]);
    expect(seen.nodes.map((o) => o.status)).toEqual(["error", "error", "ok"]);
    resetCluster(dev.cluster);
    expect(await sem.inspect()).toMatchObject({ held: 2, free: 0 });
    for (const p of permits) await p.release();
  });

  it('its errors name the semaphore (subject "semaphore"): a quorum failure, a permit\'s end and loss', async () => {
    const prefix = uniquePrefix("sem-named");
    const sem = semaphore(make(prefix), "named", { permits: 1 });
    for (const i of [0, 1]) dev.cluster.controls[i]?.inject({ kind: "status", status: 502 });
    const down = (await sem.acquire().catch((e: unknown) => e)) as QuorumError;
    expect(down).toMatchObject({ name: "QuorumError", key: "named", subject: "semaphore" });
    expect(down.message).toMatch(/^semaphore "named": /);
    resetCluster(dev.cluster);
    const permit = await sem.acquire();
    await permit.release();
    expect(permit.signal.reason).toMatchObject({ name: "LockEndedError", subject: "semaphore" });
    expect(String(permit.signal.reason)).toBe(
      'LockEndedError: permit of semaphore "named" ended: released by its holder',
    );
    const late = (await permit.extend().catch((e: unknown) => e)) as Error;
    expect(late.message).toBe('permit of semaphore "named" lost: it was released');
    // A lock of the same manager still says lock.
    const lock = await make(prefix).acquire("named");
    await lock.release();
    expect(String(lock.signal.reason)).toBe(
      'LockEndedError: lock "named" ended: released by its holder',
    );
  });

  it("costs 2N requests for an uncontended acquire and release", async () => {
    const prefix = uniquePrefix("sem-cost");
    const sem = semaphore(make(prefix), "jobs", { permits: 4 });
    await quietThenReset(dev.cluster);
    const permit = await sem.acquire();
    await permit.release({ settled: true });
    expect(await landed(dev.cluster, 2 * N)).toBe(2 * N);
  });

  it("extends a permit: its slot's PTTL read back grows", async () => {
    const prefix = uniquePrefix("sem-extend");
    const sem = semaphore(make(prefix), "x", { permits: 2 });
    const permit = await sem.acquire({ lease: 2_000 });
    const key = `${prefix}x:permit:${permit.slot}`;
    const before = Math.max(...(await pttlBack(dev, N, key)));
    expect(before).toBeLessThanOrEqual(2_000);
    const validBefore = permit.validUntil;
    const extended = await permit.extend(9_000);
    expect(extended.validUntil).toBeGreaterThan(validBefore);
    expect(permit.validUntil).toBe(extended.validUntil);
    const after = await pttlBack(dev, N, key);
    for (const pttl of after) expect(pttl).toBeGreaterThan(2_000);
    await permit.release();
  });

  it("never runs more than `permits` at once in a burst of 12 waiting callers, and runs them all", async () => {
    const prefix = uniquePrefix("sem-burst");
    let running = 0;
    let most = 0;
    const run = async (i: number) => {
      const sem = semaphore(make(prefix), "burst", { permits: 3 });
      return sem.using(
        async () => {
          running++;
          most = Math.max(most, running);
          await sleep(60);
          running--;
          return i;
        },
        { wait: 60_000 },
      );
    };
    const done = await Promise.all(Array.from({ length: 12 }, (_, i) => run(i)));
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBeGreaterThanOrEqual(2);
  });

  it("shares slots between instances configured with different counts: the larger bounds the holders", async () => {
    const prefix = uniquePrefix("sem-deploy");
    const wide = semaphore(make(prefix), "api", { permits: 5 });
    const narrow = semaphore(make(prefix), "api", { permits: 3 });
    const held = [];
    for (let i = 0; i < 5; i++) held.push(await wide.acquire());
    expect(await narrow.tryAcquire()).toBeNull();
    expect(await wide.tryAcquire()).toBeNull();
    for (const p of held) await p.release();
  });

  it("grants at most `permits` when three callers are each cut off from a different node (the pigeonhole of a per-node count)", async () => {
    const prefix = uniquePrefix("sem-partition");
    const { nodes } = dev.cluster;
    // Caller i cannot reach node i: a port nothing listens on, with the node's own token.
    const cutOff = (i: number) =>
      nodes.map((node, j) => (j === i ? { ...node, url: "http://127.0.0.1:9" } : node));
    const grants = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const locks = createLocks({
          nodes: cutOff(i),
          prefix,
          lease: 5_000,
          requestTimeout: 1_500,
        });
        // Not granted: null (at capacity), or a QuorumError (its placements split over slots with
        // its node cut off: no slot on a majority, nobody to blame — as a lock's split vote).
        return semaphore(locks, "pay", { permits: 2 })
          .tryAcquire()
          .catch((e: unknown) => {
            expect(e).toMatchObject({ name: "QuorumError" });
            return null;
          });
      }),
    );
    const granted = grants.filter((p): p is Permit => p !== null);
    expect(granted.length).toBeLessThanOrEqual(2);
    expect(granted.length).toBeGreaterThanOrEqual(1);
    // Each granted slot is held by its token on a majority, and no slot by two of them.
    const slots = granted.map((p) => p.slot);
    expect(new Set(slots).size).toBe(slots.length);
    for (const p of granted) {
      expect(
        (await holders(`${prefix}pay:permit:${p.slot}`, p.token)).length,
      ).toBeGreaterThanOrEqual(2);
    }
    for (const p of granted) await p.release();
  });
});

describe("semaphore options", () => {
  const locks = () => make(uniquePrefix("sem-options"));

  it.each([
    [{ permits: 0 }, "permits"],
    [{ permits: 65 }, "permits"],
    [{ permits: 1.5 }, "permits"],
    [{ permits: "3" }, "permits"],
    [{}, "permits"],
  ])("refuses %j naming the option, before any request", async (options, option) => {
    await quietThenReset(dev.cluster);
    const attempt = () => semaphore(locks(), "k", options as { permits: number });
    expect(attempt).toThrow(expect.objectContaining({ name: "ConfigurationError", option }));
    expect(dev.cluster.controls.every((c) => c.stats().requests === 0)).toBe(true);
  });

  it("refuses unknown options, a non-object, a reserved key and a foreign `locks`", () => {
    const l = locks();
    const call = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return error as { name: string; option: string; message: string };
      }
      throw new Error("no error");
    };
    expect(call(() => semaphore(l, "k", { permits: 2, wiat: 1 } as never))).toMatchObject({
      name: "ConfigurationError",
    });
    expect(call(() => semaphore(l, "k", null as never)).name).toBe("ConfigurationError");
    expect(call(() => semaphore(l, "a:permits", { permits: 2 })).option).toBe("key");
    expect(call(() => semaphore(l, "a:permit:3", { permits: 2 })).option).toBe("key");
    expect(call(() => semaphore(l, "", { permits: 2 })).option).toBe("key");
    expect(call(() => semaphore({} as never, "k", { permits: 2 })).option).toBe("locks");
    expect(call(() => semaphore(l, "a:permit:3", { permits: 2 })).message).toContain(
      '":permit:<n>"',
    );
  });

  it("keeps locks off a semaphore's keys: a lock key ending in :permits or :permit:<n> is refused by name", async () => {
    const l = locks();
    for (const key of ["llm:permits", "llm:permit:0", ["a", "llm:permit:12"]]) {
      const error = await l.acquire(key).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "ConfigurationError" });
      expect((error as Error).message).toContain('":permit:<n>"');
    }
    await expect(l.inspect("llm:permits")).rejects.toMatchObject({ option: "key" });
    // Only the endings are reserved.
    const fine = await l.acquire("llm:permit:x");
    await fine.release();
  });
});
