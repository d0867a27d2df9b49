/**
 * Locks that outlive one invocation (docs/SAFETY.md §4 Theorem 3): `lock.ticket()` in one `Locks`, JSON on the way,
 * `locks.resume(ticket)` in another, against a real 3-node dev cluster.
 */
import { afterEach, describe, expect, it } from "vitest";
import { withLock } from "../../src/adapters/lambda/index";
import { ConfigurationError, isLockLostError } from "../../src/errors";
import { budget, createLocks, type LocksOptions, type LockTicket } from "../../src/index";
import { fakeContext } from "../lambda/helpers";
import { useDevCluster } from "../support/dev-cluster";
import {
  eventually,
  landed,
  pttlBack,
  readBack,
  requests,
  resetCluster,
  sleep,
  uniquePrefix,
} from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });

afterEach(() => {
  for (const control of dev.cluster.controls) control.resume();
  resetCluster(dev.cluster);
});

/** Two managers over the same nodes and prefix: the sending and the receiving invocation. */
function pair(name: string, options: Partial<LocksOptions> = {}) {
  const prefix = uniquePrefix(name);
  const make = () =>
    createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 500, ...options });
  return { prefix, sender: make(), receiver: make(), other: make() };
}

/** What a queue does to a message: JSON out, JSON in. */
const viaQueue = (ticket: LockTicket): LockTicket => JSON.parse(JSON.stringify({ ticket })).ticket;

const gone = async (full: string) =>
  eventually(async () => (await readBack(dev, N, full)).every((v) => v === null));

describe("lock.ticket() → locks.resume(ticket) in another Locks", () => {
  it("the receiver holds it with a fresh token and a higher fence; the sender's handle lets go", async () => {
    const { prefix, sender, receiver, other } = pair("resume", { fencing: true, lease: 2_000 });
    const lock = await sender.acquire("k");
    const ticket = viaQueue(await lock.ticket({ lease: 5_000 }));
    expect(ticket).toMatchObject({ v: 1, key: "k", prefix, token: lock.token, lease: 5_000 });
    expect(ticket.nodes).toEqual(dev.cluster.nodes.map((n) => new URL(n.url).host));
    expect(JSON.stringify(ticket)).not.toContain(dev.cluster.nodes[0]?.token as string);
    // The hand-off extended it to the ticket's lease, on every node (decided at a majority: the
    // third node's extension may land a little later).
    await eventually(async () => (await pttlBack(dev, N, `${prefix}k`)).every((p) => p > 4_000));
    expect((await lock.release()).status).toBe("handed-on");
    await expect(lock.extend()).rejects.toMatchObject({ name: "LockLostError" });
    expect(await other.tryAcquire("k")).toBeNull(); // still held between the invocations

    const resumed = await receiver.resume(ticket);
    expect(resumed.token).not.toBe(ticket.token);
    // A new grant: a fenced store now rejects the sender's late writes.
    expect(resumed.fence).toBeGreaterThan(lock.fence as number);
    expect(ticket.fence).toBe(lock.fence);
    await eventually(async () =>
      (await readBack(dev, N, `${prefix}k`)).every((v) => v === resumed.token),
    );
    expect(resumed.validUntil).toBeGreaterThan(Date.now() + 4_000);
    expect((await resumed.release()).status).toBe("released");
    await gone(`${prefix}k`);
  });

  it("a ticket works once: two resumes of one message give exactly one lock, a later one LockLostError", async () => {
    const { sender, receiver, other } = pair("twice");
    const lock = await sender.acquire("k");
    const ticket = viaQueue(await lock.ticket());
    const both = await Promise.allSettled([receiver.resume(ticket), other.resume(ticket)]);
    const won = both.filter((r) => r.status === "fulfilled");
    const lost = both.filter((r) => r.status === "rejected").map((r) => r.reason as Error);
    expect(won).toHaveLength(1);
    expect(lost.map((e) => e.name)).toEqual(["LockLostError"]);
    const again = (await receiver.resume(ticket).catch((e) => e)) as Error;
    expect(isLockLostError(again)).toBe(true);
    // Decided once a majority answered.
    expect(again.message).toMatch(
      /^lock "k" lost: the ticket's lock expired, was released or was resumed already on [23] of 3 nodes \(node \d \(.+\): held by another caller/,
    );
    await (
      won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof receiver.resume>>>
    ).value.release();
  });

  it("ticket() twice gives the same ticket; after release it throws; a bad lease is named", async () => {
    const { sender } = pair("ticket-api");
    const lock = await sender.acquire("k");
    await expect(lock.ticket({ lease: 0 })).rejects.toMatchObject({
      name: "ConfigurationError",
      option: "lease",
    });
    const [a, b] = await Promise.all([lock.ticket(), lock.ticket()]);
    expect(b).toBe(a);
    const released = await sender.acquire("other");
    await released.release();
    await expect(released.ticket()).rejects.toMatchObject({ name: "LockLostError" });
    // A release while the hand-off's extension runs wins: no ticket for a released lock.
    const racing = await sender.acquire("racing");
    const [ticketing, release] = await Promise.allSettled([racing.ticket(), racing.release()]);
    expect(ticketing.status).toBe("rejected");
    expect(release).toMatchObject({ status: "fulfilled", value: { status: "released" } });
    await (await sender.resume(a)).release();
  });

  it.each([
    ["a typo", { leaes: 300_000 }, "leaes"],
    ["a bare number", 300_000, "options"],
    ["a string", "300000", "options"],
    ["an array", [{ lease: 300_000 }], "options"],
    ["a Map", new Map([["lease", 300_000]]), "options"],
    ["null", null, "options"],
    ["a lease in a string", { lease: "300000" }, "lease"],
  ])(
    "ticket(%s) is refused before anything is sent; the lock stays held",
    async (_, options, option) => {
      const { prefix, sender } = pair("ticket-refused", { lease: 20_000 });
      const lock = await sender.acquire("k");
      await landed(dev.cluster, N);
      resetCluster(dev.cluster);
      const ticket = lock.ticket as (o: unknown) => Promise<unknown>;
      const error = await ticket.call(lock, options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).option).toBe(option);
      expect((error as Error).message).toContain(`\`${option}\``);
      await sleep(50);
      expect(requests(dev.cluster)).toBe(0);
      // Still ours, with the lease it was granted (not handed on with the default one).
      expect(lock.signal.aborted).toBe(false);
      const pttls = await pttlBack(dev, N, `${prefix}k`);
      for (const pttl of pttls) expect(pttl).toBeGreaterThan(15_000);
      for (const pttl of pttls) expect(pttl).toBeLessThanOrEqual(20_000);
      expect((await lock.release()).status).toBe("released");
      expect(await pttlBack(dev, N, `${prefix}k`)).toEqual([-2, -2, -2]);
    },
  );

  it("a ticket whose lock expired → LockLostError; nothing is resurrected", async () => {
    const { prefix, sender, receiver } = pair("expired", { lease: 300 });
    const ticket = await (await sender.acquire("k")).ticket();
    await sleep(450);
    const error = (await receiver.resume(ticket).catch((e) => e)) as Error;
    expect(error.name).toBe("LockLostError");
    expect(error.message).toContain("node 0 (");
    expect(await readBack(dev, N, `${prefix}k`)).toEqual([null, null, null]);
  });

  it("a ticket for other nodes, another prefix, or edited → ConfigurationError naming the field, no request", async () => {
    const { sender } = pair("config");
    const lock = await sender.acquire("k");
    const ticket = viaQueue(await lock.ticket());
    const reversed = createLocks({
      nodes: [...dev.cluster.nodes].reverse(),
      prefix: ticket.prefix,
    });
    const elsewhere = createLocks({ nodes: dev.cluster.nodes, prefix: "other:" });
    const same = createLocks({ nodes: dev.cluster.nodes, prefix: ticket.prefix });
    // The acquire and the ticket's extension are decided at a majority: count from zero once
    // their last requests have landed.
    await landed(dev.cluster, 2 * N);
    resetCluster(dev.cluster);
    const cases: [Promise<unknown>, string][] = [
      [reversed.resume(ticket), "ticket.nodes"],
      [elsewhere.resume(ticket), "ticket.prefix"],
      [same.resume({ ...ticket, token: "nope" }), "ticket.token"],
      [same.resume({ ...ticket, key: "" }), "ticket.key"],
      [same.resume({ ...ticket, lease: -1 }), "ticket.lease"],
      [same.resume("ticket" as unknown as LockTicket), "ticket"],
      [same.resume(ticket, { wait: 5 } as never), "wait"],
    ];
    for (const [call, option] of cases) {
      const error = (await call.catch((e) => e)) as ConfigurationError;
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error.option).toBe(option);
      expect(error.message).not.toContain(ticket.token);
    }
    expect(requests(dev.cluster)).toBe(0);
    await (await same.resume(ticket)).release();
  });
});

describe("the pattern: Lambda → queue → Lambda", () => {
  it("withLock hands the lock on; the consumer resumes it, delivered twice it runs once", async () => {
    const prefix = uniquePrefix("pipeline");
    const nodes = dev.cluster.nodes;
    const producerLocks = createLocks({ nodes, prefix, requestTimeout: 500, lease: 10_000 });
    const consumerLocks = createLocks({ nodes, prefix, requestTimeout: 500, lease: 10_000 });
    const queue: string[] = [];
    const runs: string[] = [];
    const producer = withLock(
      async (event: { id: string }, _context, lock) => {
        queue.push(JSON.stringify({ id: event.id, ticket: await lock.ticket({ lease: 30_000 }) }));
        return "queued";
      },
      { locks: producerLocks, key: (event) => `report:${event.id}` },
    );
    const consumer = async (body: string, context: ReturnType<typeof fakeContext>) => {
      const message = JSON.parse(body) as { id: string; ticket: LockTicket };
      const lock = await consumerLocks.resume(message.ticket, {
        budget: budget.lambda(context),
        autoExtend: true,
      });
      try {
        runs.push(message.id);
      } finally {
        await lock.release();
      }
    };
    // The producer's invocation ends with the lock still held (the short budget would have
    // capped its TTL; the hand-off extended it to the ticket's lease).
    expect(await producer({ id: "7" }, fakeContext(2_000))).toBe("queued");
    const [pttl] = await pttlBack(dev, N, `${prefix}report:7`);
    expect(pttl).toBeGreaterThan(20_000);
    expect(await producerLocks.tryAcquire("report:7")).toBeNull();
    const body = queue[0] as string;
    await consumer(body, fakeContext(10_000));
    // At-least-once delivery: the same message again cannot take the lock a second time.
    const redelivered = (await consumer(body, fakeContext(10_000)).catch((e) => e)) as Error;
    expect(redelivered.name).toBe("LockLostError");
    expect(runs).toEqual(["7"]);
    await gone(`${prefix}report:7`);
  });
});
