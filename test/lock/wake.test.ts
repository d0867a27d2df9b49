import type { Redis as IORedis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { isLockBusyError } from "../../src/errors";
import { createLocks, type LockEvent, type NodeCredentials, type RedisLike } from "../../src/index";
import { ACQUIRE, HANDOVER, LEAVE, RELEASE } from "../../src/scripts";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, readBack, requests, resetCluster, sleep, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 3 });
const requestTimeout = 1_000;
// A listening waiter looks again after `retryDelayMax` at the latest and at the holder's expiry:
// with both far beyond the tests' waits, only a wake-up can grant within them.
const SLOW = { lease: 60_000, retryDelayMax: 60_000, requestTimeout };

const subscribers: IORedis[] = [];
afterAll(() => {
  for (const s of subscribers) s.disconnect();
});

/** Messages published on `channel` at node `i`, collected from a direct subscriber connection. */
async function listenDirect(i: number, channel: string): Promise<string[]> {
  const subscriber = dev.direct(i).duplicate();
  subscribers.push(subscriber);
  const messages: string[] = [];
  subscriber.on("message", (_channel: string, message: string) => messages.push(message));
  await subscriber.subscribe(channel);
  return messages;
}

/** Wake-up channels of `room` with a subscriber on node `i` (one per listening `Locks`). */
async function subscribersOf(i: number, room: string): Promise<number> {
  const channels = (await dev.direct(i).pubsub("CHANNELS", `${room}:*`)) as string[];
  return channels.length;
}

/** Wake-up streams of `room` open on all three nodes. */
async function streamsOf(room: string): Promise<number> {
  const counts = await Promise.all([0, 1, 2].map((i) => subscribersOf(i, room)));
  return counts.reduce((a, b) => a + b, 0);
}

/** Count acquire looks by result. */
function counter(): { onEvent: (e: LockEvent) => void; looks: Record<string, number> } {
  const looks: Record<string, number> = {};
  return {
    looks,
    onEvent(e) {
      if (e.type === "acquire") looks[e.result] = (looks[e.result] ?? 0) + 1;
    },
  };
}

describe("wait room scripts", () => {
  const keysOf = (prefix: string): [string, string, string] => [
    `${prefix}k`,
    `${prefix}k:fence`,
    `${prefix}k:wait`,
  ];
  const evalOn = (script: { lua: string }, keys: string[], args: string[]) =>
    dev.direct(0).eval(script.lua, keys.length, ...keys, ...args);

  it("ACQUIRE registers a waiter while held, in order of place, and removes it on grant", async () => {
    const keys = keysOf(uniquePrefix("room"));
    const far = Date.now() + 60_000;
    expect(await evalOn(ACQUIRE, keys, ["holder", "5000", "0"])).toEqual([1, 0]);
    expect(await evalOn(ACQUIRE, keys, ["t2", "5000", "0", `${far}:b`, "200", "4000"])).toEqual([
      0,
      expect.any(Number),
    ]);
    await evalOn(ACQUIRE, keys, ["t1", "5000", "0", `${far}:a`, "100", "4000"]);
    expect(await dev.direct(0).zrange(keys[2], 0, -1)).toEqual([`${far}:a`, `${far}:b`]);
    const roomTtl = await dev.direct(0).pttl(keys[2]);
    expect(roomTtl).toBeGreaterThan(0);
    expect(roomTtl).toBeLessThanOrEqual(4_000);
    // Granted to a registered waiter: it leaves the room.
    await dev.direct(0).del(keys[0]);
    expect(await evalOn(ACQUIRE, keys, ["t1", "5000", "0", `${far}:a`, "100", "4000"])).toEqual([
      1, 0,
    ]);
    expect(await dev.direct(0).zrange(keys[2], 0, -1)).toEqual([`${far}:b`]);
  });

  it("RELEASE pops the first live waiter, skips expired ones and publishes it once", async () => {
    const prefix = uniquePrefix("pop");
    const keys = keysOf(prefix);
    const now = Date.now();
    const live = `${now + 60_000}:b0b:1`;
    const next = `${now + 60_000}:a1a:2`;
    const ours = await listenDirect(0, `${keys[2]}:b0b`);
    const others = await listenDirect(0, `${keys[2]}:a1a`);
    await evalOn(ACQUIRE, keys, ["holder", "5000", "0"]);
    await evalOn(ACQUIRE, keys, ["x", "5000", "0", `${now - 1}:b0b:0`, "1", "4000"]);
    await evalOn(ACQUIRE, keys, ["y", "5000", "0", live, "2", "4000"]);
    await evalOn(ACQUIRE, keys, ["z", "5000", "0", next, "3", "4000"]);
    expect(await evalOn(RELEASE, keys, ["holder", String(now), "3000"])).toBe(1);
    await eventually(() => ours.length >= 1, 2_000);
    expect(ours).toEqual([live]);
    // Only the woken waiter's instance hears of it.
    await sleep(50);
    expect(others).toEqual([]);
    expect(await dev.direct(0).zrange(keys[2], 0, -1)).toEqual([next]);
    // The key is reserved for the woken waiter, briefly: held for anyone else.
    // The releaser's token after `|`: a re-sent release recognises its own reservation.
    expect(await dev.direct(0).get(keys[0])).toBe(`wake:${live}|holder`);
    const seen = await createLocks({
      nodes: [dev.cluster.nodes[0] as NodeCredentials],
      prefix,
    }).inspect("k");
    expect(seen).toMatchObject({ held: true, done: false });
    expect(seen.nodes[0]).toMatchObject({ status: "held", reserved: true });
    const reserved = await dev.direct(0).pttl(keys[0]);
    expect(reserved).toBeGreaterThan(0);
    expect(reserved).toBeLessThanOrEqual(3_000);
    const newcomer = `${now + 60_000}:c2c:3`;
    // Reported as a reservation (flag 3), and the newcomer queues behind.
    expect(await evalOn(ACQUIRE, keys, ["n", "5000", "0", newcomer, "9", "4000"])).toEqual([
      3,
      expect.any(Number),
    ]);
    expect(await evalOn(ACQUIRE, keys, ["t", "5000", "0", live, "2", "4000"])).toEqual([1, 0]);
    expect(await dev.direct(0).get(keys[0])).toBe("t");
    expect(await dev.direct(0).zrange(keys[2], 0, -1)).toEqual([next, newcomer]);
  });

  it("RELEASE without a waiter that outlasts the reservation deletes the key", async () => {
    const keys = keysOf(uniquePrefix("empty"));
    const now = Date.now();
    await evalOn(ACQUIRE, keys, ["holder", "5000", "0"]);
    await evalOn(ACQUIRE, keys, ["x", "5000", "0", `${now - 1}:a0a:1`, "1", "4000"]);
    // Stops waiting before the reservation would end: not woken either.
    await evalOn(ACQUIRE, keys, ["y", "5000", "0", `${now + 1_000}:b0b:1`, "2", "4000"]);
    expect(await evalOn(RELEASE, keys, ["holder", String(now), "3000"])).toBe(1);
    expect(await dev.direct(0).exists(keys[0])).toBe(0);
    expect(await dev.direct(0).zcard(keys[2])).toBe(0);
  });

  it("a cleanup release (no epoch ms) and a refused release leave the room alone", async () => {
    const keys = keysOf(uniquePrefix("cleanup"));
    const far = Date.now() + 60_000;
    await evalOn(ACQUIRE, keys, ["holder", "5000", "0"]);
    await evalOn(ACQUIRE, keys, ["w", "5000", "0", `${far}:w`, "1", "4000"]);
    expect(await evalOn(RELEASE, keys, ["other", String(Date.now()), "3000"])).toBe(-1);
    expect(await evalOn(RELEASE, keys, ["holder"])).toBe(1);
    expect(await dev.direct(0).zcard(keys[2])).toBe(1);
  });

  it("HANDOVER removes the next holder's entry", async () => {
    const keys = keysOf(uniquePrefix("handover"));
    const far = Date.now() + 60_000;
    await evalOn(ACQUIRE, keys, ["a", "5000", "0"]);
    await evalOn(ACQUIRE, keys, ["b0", "5000", "0", `${far}:b`, "1", "4000"]);
    expect(await evalOn(HANDOVER, keys, ["a", "b1", "5000", "0", `${far}:b`])).toEqual([1, 0, 1]);
    expect(await dev.direct(0).zcard(keys[2])).toBe(0);
    expect(await dev.direct(0).get(keys[0])).toBe("b1");
  });

  it("LEAVE removes one waiter from the room, and leaves a key of another type alone", async () => {
    const keys = keysOf(uniquePrefix("leave"));
    const far = Date.now() + 60_000;
    await evalOn(ACQUIRE, keys, ["holder", "5000", "0"]);
    await evalOn(ACQUIRE, keys, ["a", "5000", "0", `${far}:a:1`, "1", "4000"]);
    await evalOn(ACQUIRE, keys, ["b", "5000", "0", `${far}:b:1`, "2", "4000"]);
    expect(await evalOn(LEAVE, keys, [`${far}:a:1`])).toBe(1);
    expect(await evalOn(LEAVE, keys, [`${far}:a:1`])).toBe(0);
    expect(await dev.direct(0).zrange(keys[2], 0, -1)).toEqual([`${far}:b:1`]);
    await dev.direct(0).del(keys[2]);
    await dev.direct(0).set(keys[2], "user data");
    expect(await evalOn(LEAVE, keys, [`${far}:b:1`])).toBe(0);
    expect(await dev.direct(0).get(keys[2])).toBe("user data");
  });

  it("a user key of another type where the room would be is never touched", async () => {
    const keys = keysOf(uniquePrefix("collide"));
    await dev.direct(0).set(keys[2], "user data");
    await evalOn(ACQUIRE, keys, ["holder", "5000", "0"]);
    expect(await evalOn(ACQUIRE, keys, ["w", "5000", "0", "9:w", "1", "4000"])).toEqual([
      0,
      expect.any(Number),
    ]);
    expect(await evalOn(RELEASE, keys, ["holder", String(Date.now()), "3000"])).toBe(1);
    expect(await dev.direct(0).get(keys[2])).toBe("user data");
    expect(await dev.direct(0).exists(keys[0])).toBe(0);
  });
});

describe("wake: true", () => {
  it("a release wakes a waiter of another client at once; its stream closes afterwards", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("wake");
    const room = `${prefix}k:wait`;
    const holderLocks = createLocks({ nodes: cluster.nodes, prefix, ...SLOW });
    const seen = counter();
    const waiterLocks = createLocks({
      nodes: cluster.nodes,
      prefix,
      ...SLOW,
      wake: true,
      onEvent: seen.onEvent,
    });
    const holder = await holderLocks.acquire("k");
    resetCluster(cluster);
    const waiting = waiterLocks.acquire("k", { wait: 30_000 });
    // Listening on one node, and registered in the room on every node.
    let node = -1;
    await eventually(async () => {
      const counts = await Promise.all([0, 1, 2].map((i) => subscribersOf(i, room)));
      node = counts.indexOf(1);
      return node >= 0;
    }, 10_000);
    await eventually(async () => (seen.looks.busy ?? 0) >= 2, 10_000);
    expect((await holder.release()).status).toBe("released");
    const lock = await waiting;
    expect(await readBack(dev, 3, `${prefix}k`)).toEqual([lock.token, lock.token, lock.token]);
    // A few short looks until the stream is open, then no more polling (the next look would be
    // a minute away): the grant came from the wake-up.
    expect(seen.looks.busy).toBeLessThanOrEqual(4);
    expect(seen.looks.granted).toBe(1);
    await eventually(async () => (await subscribersOf(node, room)) === 0, 5_000);
    // The room is empty once the waiter got the lock.
    expect(await Promise.all([0, 1, 2].map((i) => dev.direct(i).zcard(room)))).toEqual([0, 0, 0]);
    console.log(
      `node requests for one woken wait incl. the holder's release: ${requests(cluster)}`,
    );
    await lock.release();
  });

  it("waiters of independent clients are woken one per release, in the order they came", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("order");
    const room = `${prefix}k:wait`;
    const first = await createLocks({ nodes: cluster.nodes, prefix, ...SLOW }).acquire("k");
    const order: number[] = [];
    const waiters = [0, 1, 2].map(() =>
      createLocks({ nodes: cluster.nodes, prefix, ...SLOW, wake: true }),
    );
    const grants: Promise<void>[] = [];
    for (const [i, locks] of waiters.entries()) {
      grants.push(
        locks.acquire("k", { wait: 30_000 }).then(async (lock) => {
          order.push(i);
          await sleep(20);
          await lock.release();
        }),
      );
      // Registered (and listening) before the next one comes.
      await eventually(async () => (await dev.direct(0).zcard(room)) === i + 1, 10_000);
    }
    await eventually(async () => (await streamsOf(room)) === 3, 10_000);
    await first.release();
    await Promise.all(grants);
    expect(order).toEqual([0, 1, 2]);
  });

  it("a waiter that gave up leaves the room; one whose leave was lost is skipped", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("skip");
    const room = `${prefix}k:wait`;
    const holder = await createLocks({ nodes: cluster.nodes, prefix, ...SLOW }).acquire("k");
    const quitter = createLocks({ nodes: cluster.nodes, prefix, ...SLOW, wake: true });
    const error = await quitter.acquire("k", { wait: 300 }).catch((e: unknown) => e);
    expect(isLockBusyError(error)).toBe(true);
    // It left every room (in the background)...
    await eventually(async () => (await dev.direct(0).zcard(room)) === 0, 5_000);
    // ...and an entry whose leave was lost (its deadline passed) only costs nothing: skipped.
    const gone = `${Date.now() - 1}:abc123:lost`;
    for (const i of [0, 1, 2]) await dev.direct(i).zadd(room, "1", gone);
    const patient = createLocks({ nodes: cluster.nodes, prefix, ...SLOW, wake: true });
    const waiting = patient.acquire("k", { wait: 30_000 });
    await eventually(async () => (await dev.direct(0).zcard(room)) === 2, 10_000);
    await eventually(async () => (await streamsOf(room)) === 1, 10_000);
    await holder.release();
    const lock = await waiting;
    expect(lock.key).toBe("k");
    await lock.release();
  });

  it("a stream that died silently is replaced after the first release it missed", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("dead");
    const room = `${prefix}k:wait`;
    const opts = { prefix, lease: 60_000, retryDelayMax: 200, requestTimeout };
    const holders = createLocks({ nodes: cluster.nodes, ...opts });
    const locks = createLocks({ nodes: cluster.nodes, ...opts, wake: true });
    resetCluster(cluster);
    for (const round of [1, 2]) {
      const holder = await holders.acquire("k");
      const waiting = locks.acquire("k", { wait: 20_000 });
      await eventually(async () => (await streamsOf(room)) === 1, 10_000);
      await sleep(50);
      if (round === 1) {
        // The endpoint ends the SSE response when its Redis connection goes; the client's
        // subscriber does not notice.
        await Promise.all([0, 1, 2].map((i) => dev.direct(i).client("KILL", "TYPE", "pubsub")));
        await eventually(async () => (await streamsOf(room)) === 0, 15_000);
      }
      await holder.release();
      await (await waiting).release();
    }
    // Round 1 found the lock free after a sleep no wake-up ended: its stream was dropped, and
    // round 2 (within the linger time) subscribed again instead of reusing it.
    const subscribes = cluster.controls.reduce(
      (n, c) => n + (c.stats().commands.subscribe ?? 0),
      0,
    );
    expect(subscribes).toBe(2);
  });

  it("a grant leaves the room of the node that refused it; an aborted waiter leaves every room", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("leave-grant");
    const room = `${prefix}k:wait`;
    const locks = createLocks({ nodes: cluster.nodes, prefix, ...SLOW, wake: true });
    // Another holder's grant on node 2 only: node 2 refuses (and registers us), 0 and 1 grant.
    await dev.direct(2).set(`${prefix}k`, "f".repeat(32), "PX", 60_000);
    const lock = await locks.acquire("k", { wait: 5_000 });
    await eventually(async () => (await dev.direct(2).zcard(room)) === 0, 5_000);
    await lock.release();
    await dev.direct(2).del(`${prefix}k`);

    const holder = await createLocks({ nodes: cluster.nodes, prefix, ...SLOW }).acquire("k");
    const stop = new AbortController();
    const waiting = locks.acquire("k", { wait: 30_000, signal: stop.signal });
    await eventually(async () => (await dev.direct(0).zcard(room)) === 1, 5_000);
    stop.abort(new Error("caller gone"));
    await expect(waiting).rejects.toThrow("caller gone");
    const rooms = () => Promise.all([0, 1, 2].map((i) => dev.direct(i).zcard(room)));
    await eventually(async () => (await rooms()).every((n) => n === 0), 5_000);
    await holder.release();
  });

  it("nodes whose client cannot subscribe: waiters poll as without wake", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("nosub");
    const plain = (i: number): RedisLike => {
      const client = dev.client(i);
      return {
        eval: (s, k, a) => client.eval(s, k, a),
        evalsha: (s, k, a) => client.evalsha(s, k, a),
      };
    };
    const nodes = [plain(0), plain(1), plain(2)];
    const holder = await createLocks({ nodes: cluster.nodes, prefix, lease: 400 }).acquire("k");
    const locks = createLocks({ nodes, prefix, wake: true, requestTimeout, retryDelayMax: 100 });
    const waiting = locks.acquire("k", { wait: 10_000 });
    await sleep(50);
    await holder.release();
    const lock = await waiting;
    expect(lock.key).toBe("k");
    await lock.release();
  });

  it("rejects a non-boolean wake with a ConfigurationError naming it", () => {
    expect(() =>
      createLocks({ nodes: dev.cluster.nodes, wake: "yes" as unknown as boolean }),
    ).toThrow(/`wake`/);
  });
});
