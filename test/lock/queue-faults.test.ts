/**
 * The queue when its hand-off messages fail, on 3 redis-servers (docs/SAFETY.md §6 "Progress",
 * "Hand-off messages are hints"): a message lost while the node counted a listener is found by the
 * waiter's refresh (P2); a node whose stream to the waiter dropped skips it; a head frozen with
 * its streams open idles the key at most `handMs` + `retryDelayMax` (plus the next look's
 * requests) before the next waiter gets it. Bounds are the documented ones in terms of the
 * options, with one look's request timeouts of slack; orders and read-back values otherwise.
 */
import type { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createLocks, type Locks } from "../../src/index";
import { ACQUIRE } from "../../src/scripts";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, readBack, resetCluster, uniquePrefix } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });
const raw: Redis[] = [];
afterEach(() => resetCluster(dev.cluster));
afterAll(() => {
  for (const connection of raw) connection.disconnect();
});

const TIMEOUT = 250;
const RETRY_MAX = 400;
const instance = (prefix: string): Locks =>
  createLocks({
    nodes: dev.cluster.nodes.map((n) => ({ url: n.url, token: n.token })),
    prefix,
    lease: 5_000,
    wait: 15_000,
    requestTimeout: TIMEOUT,
    retryDelayMax: RETRY_MAX,
  });

/** Messages published on node i matching `pattern` (a raw listener that never acts). */
async function overhear(i: number, pattern: string): Promise<string[]> {
  const sub = dev.direct(i).duplicate();
  raw.push(sub);
  const got: string[] = [];
  sub.on("pmessage", (_p: string, _c: string, message: string) => got.push(message));
  await sub.psubscribe(pattern);
  return got;
}

/** Channels of `room` with a subscriber on node i (the waiters' instances' streams). */
const channels = async (i: number, room: string) =>
  (await dev.direct(i).pubsub("CHANNELS", `${room}:*`)) as string[];

/** Cut node i's subscriptions (its streams' Redis connections), and check they are gone. */
async function cut(i: number, room: string): Promise<void> {
  expect(await channels(i, room)).toHaveLength(1);
  await dev.direct(i).client("KILL", "TYPE", "pubsub");
  expect(await channels(i, room)).toEqual([]);
}

/** The tokens of the calls waiting in `room` on node i. */
const waiting = async (i: number, room: string) =>
  (await dev.direct(i).hkeys(room)).filter((field) => field !== "^");
const everywhere = (room: string, count: number) =>
  eventually(async () => {
    const all = await Promise.all([0, 1, 2].map((i) => waiting(i, room)));
    return all.every((tokens) => tokens.length === count);
  }, 10_000);

describe("the queue when hand-off messages fail", () => {
  it("a message lost on every node is found by the waiter's refresh within retryDelayMax", async () => {
    const prefix = uniquePrefix("qlost");
    const room = `${prefix}k:wait`;
    const holder = await instance(prefix).acquire("k");
    const pending = instance(prefix).acquire("k");
    await everywhere(room, 1);
    // The waiter's subscriptions are cut; a raw listener keeps every PUBLISH answering 1, so each
    // node hands the key to the waiter and its message goes nowhere the waiter hears.
    for (let i = 0; i < N; i++) await cut(i, room);
    const heard = await Promise.all([0, 1, 2].map((i) => overhear(i, `${room}:*`)));
    const released = performance.now();
    await holder.release();
    const lock = await pending;
    const took = performance.now() - released;
    expect(heard.map((messages) => messages.length)).toEqual([1, 1, 1]);
    expect(heard.every(([m]) => m?.startsWith(`${lock.token}|`))).toBe(true);
    // Held by the waiter since the hand-off: the key was never idle, and is now extended past
    // the hand-off TTL to the lease.
    expect(await readBack(dev, N, `${prefix}k`)).toEqual([lock.token, lock.token, lock.token]);
    await eventually(async () => (await dev.direct(0).pttl(`${prefix}k`)) > 2_000);
    expect(took).toBeLessThanOrEqual(RETRY_MAX + 4 * TIMEOUT);
    await lock.release();
  }, 30_000);

  it("a node whose stream to the waiter dropped skips it; the others' hand-offs grant", async () => {
    const prefix = uniquePrefix("qskip");
    const room = `${prefix}k:wait`;
    const holder = await instance(prefix).acquire("k");
    const pending = instance(prefix).acquire("k");
    await everywhere(room, 1);
    const [token] = await waiting(0, room);
    await cut(0, room);
    await holder.release();
    const lock = await pending;
    expect(lock.token).toBe(token);
    const values = await readBack(dev, N, `${prefix}k`);
    expect(values.slice(1)).toEqual([token, token]);
    // Node 0 dropped the unheard waiter's record; nothing of the call stays queued anywhere.
    await eventually(
      async () => (await Promise.all([0, 1, 2].map((i) => waiting(i, room)))).flat().length === 0,
    );
    await lock.release();
  }, 30_000);

  it("a head frozen with its streams open idles the key at most handMs + retryDelayMax", async () => {
    const prefix = uniquePrefix("qfrozen");
    const [k, room] = [`${prefix}k`, `${prefix}k:wait`];
    const keys = [k, `${k}:fence`, room];
    const holder = await instance(prefix).acquire("k");
    // The frozen head: registered before everyone by a direct ACQUIRE, listened for by a raw
    // subscriber that never acts.
    const frozen = "f".repeat(32);
    const handMs = 600;
    const heard = await Promise.all([0, 1, 2].map((i) => overhear(i, `${room}:frozen`)));
    const registration = [Date.now() - 60_000, 1, "frozen", 60_000, handMs, 60_000, 0].map(String);
    for (let i = 0; i < N; i++) {
      const reply = await dev
        .direct(i)
        .eval(ACQUIRE.lua, 3, ...keys, frozen, "5000", "0", ...registration);
      expect((reply as number[])[0]).toBe(0);
    }
    const pending = instance(prefix).acquire("k");
    await everywhere(room, 2);
    const released = performance.now();
    await holder.release();
    const lock = await pending;
    const idle = performance.now() - released;
    expect(heard.map((messages) => messages.length)).toEqual([1, 1, 1]);
    expect(heard.every(([m]) => m?.startsWith(`${frozen}|1|`))).toBe(true);
    expect(lock.token).not.toBe(frozen);
    // Granted on a majority; the third node may still be on its way (its hand-off, or free).
    const held = (await readBack(dev, N, k)).filter((value) => value === lock.token);
    expect(held.length).toBeGreaterThanOrEqual(2);
    // Not before the frozen head's hand-off expired; at most its TTL plus one refresh (and the
    // look's requests) after the release.
    expect(idle).toBeGreaterThanOrEqual(handMs - 50);
    expect(idle).toBeLessThanOrEqual(handMs + RETRY_MAX + 4 * TIMEOUT);
    await lock.release();
  }, 30_000);
});
