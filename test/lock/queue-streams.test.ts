/**
 * The queue's hand-off streams on 3 redis-servers (docs/SAFETY.md §6 "The queue"; replaces
 * wake.test.ts, whose wake-ups and reservations are gone): one stream per node and key per
 * instance, a grant from the hand-off messages alone (no look due within the test), streams closed
 * once the instance stops waiting, a new wait after a dead stream subscribing again, clients that
 * cannot subscribe polling instead, and `wake` accepted without effect.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createLocks, type LockEvent, type RedisLike } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, readBack, resetCluster, sleep, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 3 });
afterAll(() => resetCluster(dev.cluster));
const requestTimeout = 1_000;
// A queued waiter looks again after `retryDelayMax`: far beyond the tests' waits, so only a
// hand-off message can grant within them.
const SLOW = { lease: 60_000, retryDelayMax: 60_000, requestTimeout };

/** Hand-off channels of `room` with a subscriber, per node (one per waiting instance). */
const streams = (room: string) =>
  Promise.all(
    [0, 1, 2].map(
      async (i) => ((await dev.direct(i).pubsub("CHANNELS", `${room}:*`)) as string[]).length,
    ),
  );
const queued = (room: string) =>
  Promise.all(
    [0, 1, 2].map(async (i) => (await dev.direct(i).hkeys(room)).filter((f) => f !== "^").length),
  );

describe("the queue's streams", () => {
  it("a release hands the key to another client's waiter at once; its streams close afterwards", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("qstream");
    const room = `${prefix}k:wait`;
    const looks: string[] = [];
    const onEvent = (e: LockEvent) => {
      if (e.type === "acquire") looks.push(e.result);
    };
    const holder = await createLocks({ nodes: cluster.nodes, prefix, ...SLOW }).acquire("k");
    resetCluster(cluster);
    const waiting = createLocks({ nodes: cluster.nodes, prefix, ...SLOW, onEvent }).acquire("k", {
      wait: 30_000,
    });
    // One stream per node, and the call in every node's queue.
    await eventually(async () => (await queued(room)).every((n) => n === 1), 10_000);
    expect(await streams(room)).toEqual([1, 1, 1]);
    expect((await holder.release()).status).toBe("released");
    const lock = await waiting;
    expect(await readBack(dev, 3, `${prefix}k`)).toEqual([lock.token, lock.token, lock.token]);
    // One refused look, the registration (a look refused too), then the grant from the messages.
    expect(looks).toEqual(["busy", "busy", "granted"]);
    expect(await queued(room)).toEqual([0, 0, 0]);
    const subscribes = cluster.controls.map((c) => c.stats().commands.subscribe ?? 0);
    expect(subscribes).toEqual([1, 1, 1]);
    await eventually(async () => (await streams(room)).every((n) => n === 0), 5_000);
    await lock.release();
  });

  it("a wait whose streams died silently is still granted, by its refresh", async () => {
    // The endpoint ends the SSE response when its Redis connection goes; the client's subscriber
    // is not told. What finds the key then is the waiter's refresh every retryDelayMax (the
    // nodes skip a waiter nobody listens for: docs/SAFETY.md §6, "Hand-off messages are hints").
    // (Finding: within the linger time the next wait of the instance reuses the dead streams
    // instead of subscribing again, so it is skipped by every hand-off until they are dropped.)
    const { cluster } = dev;
    const prefix = uniquePrefix("qdead");
    const room = `${prefix}k:wait`;
    const opts = { prefix, lease: 60_000, retryDelayMax: 200, requestTimeout };
    const holders = createLocks({ nodes: cluster.nodes, ...opts });
    const locks = createLocks({ nodes: cluster.nodes, ...opts });
    for (const round of [1, 2]) {
      const holder = await holders.acquire("k");
      const waiting = locks.acquire("k", { wait: 20_000 });
      await eventually(async () => (await queued(room)).every((n) => n === 1), 10_000);
      if (round === 1) {
        await eventually(async () => (await streams(room)).every((n) => n === 1), 10_000);
        await Promise.all([0, 1, 2].map((i) => dev.direct(i).client("KILL", "TYPE", "pubsub")));
        await eventually(async () => (await streams(room)).every((n) => n === 0), 15_000);
      }
      await holder.release();
      const lock = await waiting;
      expect(await readBack(dev, 3, `${prefix}k`)).toEqual([lock.token, lock.token, lock.token]);
      await lock.release();
    }
  });

  it("nodes whose client cannot subscribe: waiters poll, and are granted", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("qnosub");
    const plain = (i: number): RedisLike => {
      const client = dev.client(i);
      return {
        eval: (s, k, a) => client.eval(s, k, a),
        evalsha: (s, k, a) => client.evalsha(s, k, a),
      };
    };
    const holder = await createLocks({ nodes: cluster.nodes, prefix, lease: 400 }).acquire("k");
    const locks = createLocks({
      nodes: [0, 1, 2].map(plain),
      prefix,
      requestTimeout,
      retryDelayMax: 100,
    });
    const waiting = locks.acquire("k", { wait: 10_000 });
    await sleep(50);
    // A poller registers nowhere.
    expect(await queued(`${prefix}k:wait`)).toEqual([0, 0, 0]);
    await holder.release();
    const lock = await waiting;
    expect(lock.key).toBe("k");
    await lock.release();
  });

  it("`wake` is accepted and changes nothing; a non-boolean is a ConfigurationError naming it", async () => {
    expect(() =>
      createLocks({ nodes: dev.cluster.nodes, wake: "yes" as unknown as boolean }),
    ).toThrow(/`wake`/);
    const prefix = uniquePrefix("qwake");
    const holder = await createLocks({ nodes: dev.cluster.nodes, prefix, ...SLOW }).acquire("k");
    const waiting = createLocks({ nodes: dev.cluster.nodes, prefix, ...SLOW, wake: false }).acquire(
      "k",
      {
        wait: 30_000,
      },
    );
    await eventually(async () => (await queued(`${prefix}k:wait`)).every((n) => n === 1), 10_000);
    await holder.release();
    await (await waiting).release();
  });
});
