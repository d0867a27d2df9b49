/**
 * `tryAcquire` looks once. A `wait` passed to it (a copy of `acquire`'s options, or a guess) was
 * dropped without a word; now anything but `wait: 0` is a `ConfigurationError` naming `wait`,
 * before any request, on the lock and on the semaphore alike. Against the dev cluster, so that
 * "no request" and "the key stays free" are read from the nodes.
 */
import { describe, expect, it } from "vitest";
import { ConfigurationError, createLocks, semaphore } from "../../src/index";
import { requests, resetCluster, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });

function setup() {
  resetCluster(dev.cluster);
  return createLocks({ nodes: dev.cluster.nodes, prefix: uniquePrefix("try-wait") });
}

const MESSAGE = "invalid option `wait`: tryAcquire() never waits: use acquire()";

describe("tryAcquire({ wait })", () => {
  it.each([
    ["locks.tryAcquire", (wait: unknown) => setup().tryAcquire("k", { wait } as never)],
    [
      "semaphore.tryAcquire",
      (wait: unknown) => semaphore(setup(), "s", { permits: 2 }).tryAcquire({ wait } as never),
    ],
  ])("%s: a wait is refused naming `wait`; nothing is sent", async (_, call) => {
    for (const wait of [5_000, 1, "5s"]) {
      const error = await Promise.resolve(call(wait)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).option).toBe("wait");
      expect((error as Error).message).toBe(MESSAGE);
    }
    expect(requests(dev.cluster)).toBe(0);
  });

  // The types leave `wait` out; JavaScript callers and spread options may still carry a 0.
  it("wait: 0 and no wait are one look, as before", async () => {
    const locks = setup();
    const lock = await locks.tryAcquire("k", { wait: 0 } as never);
    expect(lock).not.toBeNull();
    // `null` is "not set", as acquire() reads it.
    expect(await locks.tryAcquire("k", { wait: null } as never)).toBeNull();
    expect(await locks.tryAcquire("k")).toBeNull();
    await lock?.release();
    const sem = semaphore(locks, "s", { permits: 1 });
    const permit = await sem.tryAcquire({ wait: 0 } as never);
    expect(permit).not.toBeNull();
    expect(await sem.tryAcquire()).toBeNull();
    await permit?.release();
    expect(await locks.inspect("k")).toMatchObject({ held: false });
  });
});
