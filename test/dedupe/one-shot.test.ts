/**
 * Locks that a wrapper ends with a done marker (`once()`, scheduled dedupe, Idempotency-Key),
 * against a real 3-node dev cluster:
 * - `lock.ticket()` inside the wrapper rejects with `ConfigurationError` `ticket` and the lock
 *   stays held, so the wrapper records the run with its own token (a handed-on ticket could never
 *   be resumed, or the run would go unrecorded);
 * - with `fencing`, a one-shot key's fence counter gets an expiry on every node (the marker's
 *   retention, or a failed run's retention at its release), while a plain lock's counter keeps
 *   none; a retry of a failed run continues the count.
 */
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { idempotency } from "../../src/adapters/hono";
import {
  createLocks,
  isConfigurationError,
  isLockBusyError,
  type Lock,
  type LockTicket,
  once,
} from "../../src/index";
import { eventually, pttlBack, readBack, resetCluster, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const N = 3;
const dev = useDevCluster({ nodes: N });
const RETENTION = 60_000;

afterEach(() => resetCluster(dev.cluster));

function setup(fencing = false) {
  const prefix = uniquePrefix("one-shot");
  const locks = createLocks({ nodes: dev.cluster.nodes, prefix, fencing });
  return { prefix, locks };
}

/** `lock.ticket()`'s rejection, or the ticket it gave. */
async function ticketOf(lock: Lock): Promise<unknown> {
  try {
    return await lock.ticket();
  } catch (error) {
    return error;
  }
}

describe("a ticket inside a wrapper that completes", () => {
  it("once(): ticket() rejects with ConfigurationError `ticket`, the lock stays held, the run is recorded", async () => {
    const { prefix, locks } = setup();
    let ticket: unknown;
    let token = "";
    const result = await once(
      locks,
      "report",
      async (lock) => {
        token = lock.token;
        ticket = await ticketOf(lock);
        // Still ours on every node, and still extendable: nothing was sent or changed.
        expect(await readBack(dev, N, `${prefix}report`)).toEqual([token, token, token]);
        await lock.extend();
        expect(lock.signal.aborted).toBe(false);
        return "built";
      },
      { retention: RETENTION },
    );
    expect(isConfigurationError(ticket) && ticket.option).toBe("ticket");
    expect(String((ticket as Error).message)).toMatch(/once\(\).*done\s+marker/);
    expect(result).toEqual({ status: "ran", value: "built", recorded: true });
    expect(await readBack(dev, N, `${prefix}report`)).toEqual(Array(N).fill(`done:${token}`));
    // A duplicate trigger is skipped as done.
    expect(await once(locks, "report", () => "again")).toMatchObject({ reason: "done" });
  });

  it("once(): a caller that goes on after the rejection still ends the lock normally when fn throws", async () => {
    const { prefix, locks } = setup();
    const boom = new Error("job failed");
    await expect(
      once(locks, "job", async (lock) => {
        expect(isConfigurationError(await ticketOf(lock))).toBe(true);
        throw boom;
      }),
    ).rejects.toBe(boom);
    // Released (no marker): a retry runs. (A release resolves at a majority; the last node's
    // delete may land a moment later.)
    await eventually(async () => (await readBack(dev, N, `${prefix}job`)).every((v) => v === null));
    expect(await once(locks, "job", () => "retried")).toMatchObject({ status: "ran" });
  });

  it("Idempotency-Key: ticket() in the handler rejects; the response is kept and replayed", async () => {
    const { locks } = setup();
    let runs = 0;
    let ticket: unknown;
    const app = new Hono();
    app.use("/charge", idempotency({ locks }));
    app.post("/charge", async (c) => {
      runs += 1;
      const lock = (c.var as { idempotencyClaim?: Lock }).idempotencyClaim as Lock;
      ticket = await ticketOf(lock);
      return c.json({ charge: runs }, 201);
    });
    const send = () =>
      app.request("/charge", { method: "POST", body: "a", headers: { "Idempotency-Key": `"k1"` } });
    const first = await send();
    expect(first.status).toBe(201);
    expect(isConfigurationError(ticket) && ticket.option).toBe("ticket");
    expect(String((ticket as Error).message)).toMatch(/Idempotency-Key/);
    const replay = await send();
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect(await replay.json()).toEqual({ charge: 1 });
    expect(runs).toBe(1);
  });

  it("a plain lock still hands on: the ticket resumes (only the wrappers refuse)", async () => {
    const { locks } = setup();
    const lock = await locks.acquire("plain", { lease: 5_000 });
    const ticket = (await lock.ticket()) as LockTicket;
    const resumed = await locks.resume(ticket);
    expect((await resumed.release()).status).toBe("released");
  });
});

describe("fence counters of one-shot keys expire", () => {
  it("once(): the counter expires with the marker on every node; a plain lock's keeps no expiry", async () => {
    const { prefix, locks } = setup(true);
    for (let i = 0; i < 3; i++) {
      expect(await once(locks, `occurrence:${i}`, () => i, { retention: RETENTION })).toMatchObject(
        { status: "ran", recorded: true },
      );
    }
    // COMPLETE resolves at a majority: wait for the last node's marker before reading the counters.
    const markers = async () =>
      (
        await Promise.all([0, 1, 2].map((i) => readBack(dev, N, `${prefix}occurrence:${i}`)))
      ).flat();
    await eventually(async () => (await markers()).every((v) => v?.startsWith("done:")));
    for (let i = 0; i < 3; i++) {
      const marker = await pttlBack(dev, N, `${prefix}occurrence:${i}`);
      const counter = await pttlBack(dev, N, `${prefix}occurrence:${i}:fence`);
      for (const [node, pttl] of counter.entries()) {
        expect(pttl).toBeGreaterThan(0);
        expect(pttl).toBeLessThanOrEqual(RETENTION);
        // Never before the marker: while it stands, no fence is issued there.
        expect(pttl).toBeGreaterThanOrEqual((marker[node] ?? 0) - 50);
      }
    }
    const plain = await locks.acquire("plain");
    await plain.release();
    expect(await pttlBack(dev, N, `${prefix}plain:fence`)).toEqual([-1, -1, -1]);
  });

  it("once(): a failed run's release gives the counter the retention; the retry continues the count", async () => {
    const { prefix, locks } = setup(true);
    let first: number | undefined;
    await expect(
      once(
        locks,
        "job",
        (lock) => {
          first = lock.fence;
          throw new Error("failed");
        },
        { retention: RETENTION },
      ),
    ).rejects.toThrow("failed");
    await eventually(async () => (await readBack(dev, N, `${prefix}job`)).every((v) => v === null));
    for (const pttl of await pttlBack(dev, N, `${prefix}job:fence`)) {
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(RETENTION);
    }
    let second: number | undefined;
    await once(
      locks,
      "job",
      async (lock) => {
        second = lock.fence;
        // Held by a grant: the counter keeps no expiry until this run ends (on the majority the
        // grant needed; the last node's raise may land a moment later).
        const held = await pttlBack(dev, N, `${prefix}job:fence`);
        expect(held.filter((pttl) => pttl === -1).length).toBeGreaterThanOrEqual(2);
      },
      { retention: RETENTION },
    );
    expect(second).toBeGreaterThan(first as number);
    await eventually(async () =>
      (await pttlBack(dev, N, `${prefix}job:fence`)).every((pttl) => pttl > 0),
    );
  });

  it("Idempotency-Key: every request's counter has an expiry on every node", async () => {
    const { prefix, locks } = setup(true);
    const app = new Hono();
    app.use("/charge", idempotency({ locks, ttl: RETENTION }));
    app.post("/charge", (c) => c.json({ ok: true }, 201));
    for (let i = 0; i < 5; i++) {
      const res = await app.request("/charge", {
        method: "POST",
        body: "a",
        headers: { "Idempotency-Key": `"key-${i}"` },
      });
      expect(res.status).toBe(201);
    }
    // Each COMPLETE resolves at a majority: wait until every node has all five counters expiring.
    const expiring = async () => {
      let n = 0;
      for (const direct of [0, 1, 2].map((i) => dev.direct(i))) {
        for (const key of await direct.keys(`${prefix}*:fence`)) {
          if ((await direct.pttl(key)) > 0) n += 1;
        }
      }
      return n === 5 * N;
    };
    await eventually(expiring);
    const counters: string[] = [];
    for (const direct of [0, 1, 2].map((n) => dev.direct(n))) {
      for (const key of await direct.keys(`${prefix}*:fence`)) {
        counters.push(key);
        const pttl = await direct.pttl(key);
        expect(pttl).toBeGreaterThan(0);
        expect(pttl).toBeLessThanOrEqual(RETENTION);
      }
    }
    expect(counters).toHaveLength(5 * N);
  });

  it("a fenced duplicate is still refused while the marker stands", async () => {
    const { locks } = setup(true);
    await once(locks, "k", () => 1, { retention: RETENTION });
    const error = await locks.acquire("k", { wait: 0 }).catch((e: unknown) => e);
    expect(isLockBusyError(error)).toBe(true);
  });
});
