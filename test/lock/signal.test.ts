/**
 * `lock.signal` says how a lock ended: `LockEndedError` (`how`) after `release()`, `using()`
 * returning, `ticket()` or a `once()` completion, `LockLostError` after a loss (kept when a release
 * follows). Against a real 3-node dev cluster; the release's requests are counted on the nodes.
 */
import { describe, expect, it } from "vitest";
import {
  createLocks,
  isLockEndedError,
  isLockLostError,
  type Lock,
  LockEndedError,
  LockLostError,
  once,
} from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { landed, readBack, resetCluster, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 3 });

function setup(name: string) {
  resetCluster(dev.cluster);
  const prefix = uniquePrefix(name);
  // A generous request timeout: on a loaded machine an answer can take longer than the default
  // 250 ms (a QuorumError), which no test here is about.
  const locks = createLocks({
    nodes: dev.cluster.nodes,
    prefix,
    lease: 5_000,
    requestTimeout: 1_500,
  });
  return { prefix, locks };
}

/** The signal's reason as `{ name, how }` (how: the LockEndedError's, else undefined). */
const why = (lock: Lock) => {
  const reason = lock.signal.reason as { name?: string; how?: string } | undefined;
  return { aborted: lock.signal.aborted, name: reason?.name, how: reason?.how };
};

describe("lock.signal after the holder ends the lock", () => {
  it("release(): aborts with LockEndedError 'released', also for a signal first read afterwards", async () => {
    const { locks } = setup("sig-release");
    const read = await locks.acquire("k");
    const signal = read.signal; // read while held
    expect(signal.aborted).toBe(false);
    await read.release();
    expect(why(read)).toEqual({ aborted: true, name: "LockEndedError", how: "released" });
    expect(signal.reason).toBeInstanceOf(LockEndedError);
    expect(isLockEndedError(signal.reason)).toBe(true);
    expect(isLockLostError(signal.reason)).toBe(false);
    expect((signal.reason as Error).message).toBe('lock "k" ended: released by its holder');

    const unread = await locks.acquire("k");
    await unread.release();
    expect(why(unread)).toEqual({ aborted: true, name: "LockEndedError", how: "released" });
  });

  it("an abort listener that releases, extends or hands on changes nothing: one release round", async () => {
    const { locks, prefix } = setup("sig-listener");
    const lock = await locks.acquire("k");
    const seen: Promise<unknown>[] = [];
    let releaseInside: Promise<unknown> | undefined;
    lock.signal.addEventListener("abort", () => {
      releaseInside = lock.release();
      seen.push(lock.extend().then(String, (e: Error) => e.name));
      seen.push(lock.ticket().then(String, (e: Error) => e.name));
    });
    // The acquire (3 requests since setup) is decided at a majority: count from its last one on.
    const before = await landed(dev.cluster, 3);
    const outer = lock.release();
    expect(releaseInside).toBe(outer); // the same release, not a second one
    expect(await outer).toMatchObject({ status: "released" });
    expect(await Promise.all(seen)).toEqual(["LockLostError", "LockLostError"]);
    // one RELEASE per node, nothing else (the release too resolves at a majority)
    expect((await landed(dev.cluster, before + 3)) - before).toBe(3);
    expect(await readBack(dev, 3, `${prefix}k`)).toEqual([null, null, null]);
  });

  it("using(): aborted with 'released' once the function returned", async () => {
    const { locks } = setup("sig-using");
    let inside: Lock | undefined;
    const during = await locks.using("k", (lock) => {
      inside = lock;
      return lock.signal.aborted;
    });
    expect(during).toBe(false);
    expect(why(inside as Lock)).toEqual({
      aborted: true,
      name: "LockEndedError",
      how: "released",
    });
  });

  it("ticket(): aborted with 'handed-on' when the ticket is made; the resumer's signal is not", async () => {
    const { locks } = setup("sig-ticket");
    const sender = await locks.acquire("k");
    const ticket = await sender.ticket();
    expect(why(sender)).toEqual({ aborted: true, name: "LockEndedError", how: "handed-on" });
    const receiver = await locks.resume(ticket);
    expect(receiver.signal.aborted).toBe(false);
    expect(await sender.release()).toMatchObject({ status: "handed-on" });
    expect(why(sender).how).toBe("handed-on");
    await receiver.release();
    expect(why(receiver).how).toBe("released");
  });

  it("once(): aborted with 'completed' after the job's done marker", async () => {
    const { locks } = setup("sig-once");
    let inside: Lock | undefined;
    const result = await once(locks, "job", (lock) => {
      inside = lock;
      return lock.signal.aborted;
    });
    expect(result).toMatchObject({ status: "ran", value: false });
    expect(why(inside as Lock)).toEqual({
      aborted: true,
      name: "LockEndedError",
      how: "completed",
    });
  });

  it("a loss keeps its LockLostError through a later release", async () => {
    const { locks } = setup("sig-lost");
    const lock = await locks.acquire("k");
    const signal = lock.signal;
    await locks.forceRelease("k");
    await expect(lock.extend()).rejects.toBeInstanceOf(LockLostError);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    await lock.release();
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect(why(lock).name).toBe("LockLostError");
  });
});
