/**
 * The violation the Redis documentation predicts, built step by step (no timing luck), and the two
 * ways out. Three nodes. Holder A gets the lock on {n0, n1} while n2 fails; then n1 restarts.
 *
 * - n1 comes back EMPTY at once: B acquires on {n1, n2} while A is still valid. The checker must
 *   report the overlap and the lost update of the non-atomic counter; the fenced write (B wrote
 *   first) must reject the stale holder A.
 * - n1 keeps its data (AOF, fsync always): B is refused while A is valid.
 * - n1 stays away longer than the lease: B gets the lock only after A's validity ended, and A,
 *   checking its signal before writing, writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevCluster, startDevCluster } from "../../src/dev/index";
import { createLocks, isLockBusyError, type Lock } from "../../src/index";
import { checkHistory } from "./harness/checker";
import { now } from "./harness/clock";
import type { GrantRecord, History, Wipe } from "./harness/history";
import { ProtectedResource } from "./harness/resource";

const LEASE = 4_000;
let cluster: DevCluster;
let resourceCluster: DevCluster;

beforeAll(async () => {
  [cluster, resourceCluster] = await Promise.all([
    startDevCluster({ nodes: 3, persistence: "aof" }),
    startDevCluster({ nodes: 1, backend: "redis" }),
  ]);
});
afterAll(async () => {
  await Promise.allSettled([cluster?.stop(), resourceCluster?.stop()]);
});

/** One scenario's lock managers, resource and recorded history. */
function scenario(name: string, lease = LEASE) {
  const namespace = `restart:${name}:${crypto.randomUUID()}:`;
  const options = {
    nodes: cluster.nodes,
    prefix: `${namespace}lock:`,
    lease,
    fencing: true,
    requestTimeout: 1_000,
  };
  const resource = new ProtectedResource(
    resourceCluster.controls[0]?.redisUrl ?? "",
    `${namespace}res:`,
  );
  const grants: GrantRecord[] = [];
  const wipes: Wipe[] = [];
  return {
    a: createLocks(options),
    b: createLocks(options),
    resource,
    wipes,
    record(id: string, lock: Lock, requested: number): GrantRecord {
      const record: GrantRecord = {
        id,
        source: "main",
        key: lock.key,
        requested,
        granted: now(),
        validEnd: now() + (lock.validUntil - Date.now()),
        fence: lock.fence,
        extended: 0,
        extendFailed: 0,
      };
      grants.push(record);
      return record;
    },
    async history(): Promise<History> {
      const state = await resource.state(["k"]);
      resource.close();
      return { grants, resource: state, wipes, leftovers: [], clockError: { main: 0 } };
    },
  };
}

/** Warm up (every node's fence counter at 1), then A acquires while n2 answers 503. */
async function holderOnN0N1(s: ReturnType<typeof scenario>) {
  await (await s.a.acquire("k")).release();
  // release() and the fence raise resolve at a majority: let the third node catch up, so every
  // node is free with its counter at 1 before the scenario starts
  for (let i = 0; i < 200; i++) {
    const seen = await s.a.inspect("k");
    if (seen.nodes.every((o) => o.status === "absent" && o.fence === 1)) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  cluster.controls[2]?.inject({ kind: "status", status: 503 });
  const requested = now();
  const lock = await s.a.acquire("k");
  cluster.controls[2]?.clearFaults();
  const record = s.record("A", lock, requested);
  expect(lock.fence).toBe(2);
  return { lock, record };
}

/** The non-atomic read-modify-write, split so the test can interleave two holders. */
async function readThenWrite(s: ReturnType<typeof scenario>, record: GrantRecord) {
  const readAt = now();
  const read = await s.resource.readCounter("k");
  return async () => {
    await s.resource.writeCounter("k", read + 1);
    record.counter = { state: "done", read, readAt, ackAt: now() };
  };
}

async function fencedWrite(s: ReturnType<typeof scenario>, record: GrantRecord, fence: number) {
  const read = await s.resource.readFenced("k");
  const accepted = await s.resource.writeFenced("k", fence, read + 1);
  record.fenced = { state: "done", read, accepted, at: now() };
  return accepted;
}

describe("a minority node restarting empty at once (the documented Redlock hazard)", () => {
  it("lets a second holder in: the checker reports it, the fenced write rejects the stale holder", async () => {
    const s = scenario("empty-now");
    const { lock: a, record: recA } = await holderOnN0N1(s);
    const writeA = await readThenWrite(s, recA);

    const wipeAt = now();
    await cluster.controls[1]?.restart({ keepData: false });
    s.wipes.push({ node: 1, at: wipeAt, backAt: now() });

    const requestedB = now();
    const b = await s.b.acquire("k"); // n0 says held (A); n1 (empty) and n2 grant
    const recB = s.record("B", b, requestedB);
    expect(recB.granted).toBeLessThan(recA.validEnd); // A is still valid: two holders
    expect(b.fence).toBeLessThanOrEqual(a.fence as number); // n1's counter was lost too

    const writeB = await readThenWrite(s, recB);
    await writeB();
    expect(await fencedWrite(s, recB, b.fence as number)).toBe(true);
    await writeA(); // A still believes it holds the lock: its write overwrites B's
    expect(await fencedWrite(s, recA, a.fence as number)).toBe(false); // the resource says no

    recA.releaseStart = now();
    recA.releaseStatus = (await a.release()).status;
    recB.releaseStart = now();
    recB.releaseStatus = (await b.release()).status;

    const history = await s.history();
    const result = checkHistory(history);
    expect(result.violations.map((v) => v.kind)).toEqual(["overlap", "lost-update"]);
    expect(result.violations[0]).toMatchObject({ key: "k", grants: ["A", "B"] });
    expect(result.violations[1]).toMatchObject({ value: 1, completed: 2, grants: ["A", "B"] });
    // the fence did not increase (n1's counter was wiped): listed, and excused by the wipe
    expect(result.excusedFenceRegressions).toMatchObject([{ grants: ["A", "B"] }]);
    // the fenced counter lost nothing: only B's write was accepted
    expect(history.resource.k).toMatchObject({ counter: 1, fencedCounter: 1 });
  }, 30_000);

  it("with the node keeping its data (AOF), the second acquire is refused while A is valid", async () => {
    const s = scenario("keep");
    const { lock: a, record: recA } = await holderOnN0N1(s);
    const writeA = await readThenWrite(s, recA);
    await cluster.controls[1]?.restart({ keepData: true });
    const refused = await s.b.acquire("k").catch((e: unknown) => e);
    expect(isLockBusyError(refused), String(refused)).toBe(true);
    await writeA();
    expect(await fencedWrite(s, recA, a.fence as number)).toBe(true);
    recA.releaseStart = now();
    recA.releaseStatus = (await a.release()).status;
    expect(recA.releaseStatus).toBe("released");
    const result = checkHistory(await s.history());
    expect(result.violations).toEqual([]);
  }, 30_000);

  it("with the node away longer than the lease, B gets the lock only after A's validity", async () => {
    const lease = 1_500;
    const s = scenario("delayed", lease);
    const { lock: a, record: recA } = await holderOnN0N1(s);
    const read = await s.resource.readCounter("k");
    const wipeAt = now();
    await cluster.controls[1]?.restart({ keepData: false, delayMs: lease + 500 });
    s.wipes.push({ node: 1, at: wipeAt, backAt: now() });

    const requestedB = now();
    const b = await s.b.acquire("k");
    const recB = s.record("B", b, requestedB);
    expect(recB.granted).toBeGreaterThan(recA.validEnd);
    expect(a.signal.aborted).toBe(true); // A was told before its validity ran out
    // A checks its signal before writing, as a careful holder does: nothing written
    recA.counter = { state: "abandoned", read, why: "lock.signal aborted" };
    const writeB = await readThenWrite(s, recB);
    await writeB();
    expect(await fencedWrite(s, recB, b.fence as number)).toBe(true);
    recB.releaseStart = now();
    recB.releaseStatus = (await b.release()).status;
    recA.releaseStart = now();
    recA.releaseStatus = (await a.release()).status;
    expect(recA.releaseStatus).toBe("expired");
    // No overlap and no lost update. B's fence may equal A's when n0 answered after the majority
    // (n1's counter was lost): fences need nodes that keep their data; the checker lists it as
    // excused by the wipe.
    const result = checkHistory(await s.history());
    expect(result.violations).toEqual([]);
  }, 30_000);
});
