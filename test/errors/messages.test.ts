/**
 * What the errors of a waiting acquire and of an unreachable node say, on real servers: a busy
 * error after waiting reports the whole cluster, a QuorumError after waiting says how long and how
 * many rounds it tried, and a network failure keeps its cause.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createLocks, type LockEvent, type LocksOptions } from "../../src/index";
import { eventually, readBack, resetCluster, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const N = 3;
const dev = useDevCluster({ nodes: N });

afterEach(() => {
  for (const control of dev.cluster.controls) control.resume();
  resetCluster(dev.cluster);
});

const hostOf = (i: number) => new URL(dev.cluster.nodes[i]?.url ?? "").host;

const setup = (prefix: string, options: Partial<LocksOptions> = {}) =>
  createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 200, ...options });

describe("a busy error after waiting", () => {
  it("a poller reports the last full round of the cluster, not the one node a probe asked", async () => {
    const prefix = uniquePrefix("busy-poll");
    const holder = await setup(prefix).acquire("k", { lease: 20_000 });
    await eventually(async () =>
      (await readBack(dev, N, `${prefix}k`)).every((v) => v === holder.token),
    );
    // A lock on several keys polls (a wait for one key queues: it sends no probes).
    const busy = (await setup(prefix)
      .acquire(["j", "k"], { wait: 1_500 })
      .catch((e) => e)) as Error;
    expect(busy.name).toBe("LockBusyError");
    // Polling probes one node after the first round; the counts are the full round's (decided
    // once two nodes refused: the third may still be in flight).
    const parts =
      /^lock "j, k" is busy: held on ([23]) of 3 nodes in the last full round, free in at most (\d+) ms \(last probe: node (\d) \(([^)]+)\): held by another caller for (\d+) ms more; last full round: (.+)\)$/.exec(
        busy.message,
      );
    expect(parts, busy.message).not.toBeNull();
    const [, held, retryAfter, probed, probedHost, probedLeft, round = ""] = parts ?? [];
    expect(probedHost).toBe(hostOf(Number(probed)));
    expect(probedLeft).toBe(retryAfter);
    expectNodes(round, Number(held));
    await holder.release();
  });

  it("a queued waiter reports its last look at the whole cluster (a full round: no probes)", async () => {
    const prefix = uniquePrefix("busy-wait");
    const holder = await setup(prefix).acquire("k", { lease: 20_000 });
    await eventually(async () =>
      (await readBack(dev, N, `${prefix}k`)).every((v) => v === holder.token),
    );
    const busy = (await setup(prefix)
      .acquire("k", { wait: 1_500 })
      .catch((e) => e)) as Error;
    expect(busy.name).toBe("LockBusyError");
    // Every look of a queued wait is a full round (decided once two nodes refused: the third
    // may still be in flight).
    const parts =
      /^lock "k" is busy: held on ([23]) of 3 nodes asked, free in at most (\d+) ms \((.+)\)$/.exec(
        busy.message,
      );
    expect(parts, busy.message).not.toBeNull();
    const [, held, , round = ""] = parts ?? [];
    expectNodes(round, Number(held));
    await holder.release();
  });
});

/** `round` names the three nodes in order, `held` of them held by another caller. */
function expectNodes(round: string, held: number): void {
  const perNode = round.split("; ");
  expect(perNode).toHaveLength(3);
  perNode.forEach((text, i) => {
    expect(text).toMatch(
      new RegExp(
        `^node ${i} \\(${hostOf(i)}\\): (held by another caller for \\d+ ms more|no answer yet)$`,
      ),
    );
  });
  expect(perNode.filter((t) => t.includes("held by another caller"))).toHaveLength(held);
}

describe("busy errors of callers waiting in line", () => {
  it("every caller of one instance reports the whole cluster, also those that never asked", async () => {
    const prefix = uniquePrefix("busy-line");
    const holder = await setup(prefix).acquire("k", { lease: 20_000 });
    await eventually(async () =>
      (await readBack(dev, N, `${prefix}k`)).every((v) => v === holder.token),
    );
    const events: LockEvent[] = [];
    const shared = setup(prefix, { onEvent: (e) => events.push(e) });
    // The first caller asks the nodes (a round, then it queues); callers that come once it was
    // refused wait in line behind it without asking, and give up first, with what it saw last.
    const first = shared.acquire("k", { wait: 2_500 }).catch((e) => e);
    await eventually(async () => events.some((e) => e.type === "acquire"));
    const behind = [1_000, 1_500].map((wait) => shared.acquire("k", { wait }).catch((e) => e));
    const errors = (await Promise.all([first, ...behind])) as Error[];
    for (const error of errors) {
      expect(error.name).toBe("LockBusyError");
      expect(error.message).toMatch(/^lock "k" is busy: held on [23] of 3 nodes /);
    }
    await holder.release();
  });
});

describe("a QuorumError after waiting", () => {
  it("says how many attempts it made and for how long (using, every node paused)", async () => {
    const events: LockEvent[] = [];
    const locks = setup(uniquePrefix("dead"), { onEvent: (e) => events.push(e) });
    for (const control of dev.cluster.controls) control.pause();
    let ran = false;
    const error = (await locks
      .using(
        "k",
        async () => {
          ran = true;
        },
        { wait: 1_500 },
      )
      .catch((e) => e)) as Error;
    expect(ran).toBe(false);
    expect(error.name).toBe("QuorumError");
    const parts =
      /^lock "k": gave up after (\d+) attempts over (\d+\.\d) s; the last: no majority \(2 of 3 nodes needed; ([23]) failed, 0 held\): (.+)$/.exec(
        error.message,
      );
    expect(parts, error.message).not.toBeNull();
    const [, attempts, seconds, failed, nodes = ""] = parts ?? [];
    // One attempt per acquire round it reported (the last one's timeout is cut to the wait left);
    // it gave up once the wait was over.
    const rounds = events.filter((e) => e.type === "acquire");
    expect(Number(attempts)).toBe(rounds.length);
    expect(rounds.length).toBeGreaterThan(1);
    expect(Number(seconds)).toBeGreaterThanOrEqual(1.5);
    const perNode = nodes.split("; ");
    expect(perNode).toHaveLength(3);
    perNode.forEach((text, i) => {
      expect(text).toMatch(
        new RegExp(`^node ${i} \\(${hostOf(i)}\\): (no answer within \\d+ ms|no answer yet)$`),
      );
    });
    expect(perNode.filter((t) => t.includes("within"))).toHaveLength(Number(failed));
  });

  it("a single failed round says nothing of attempts", async () => {
    const locks = setup(uniquePrefix("dead-once"));
    for (const control of dev.cluster.controls) control.pause();
    const error = (await locks.acquire("k").catch((e) => e)) as Error;
    expect(error.name).toBe("QuorumError");
    expect(error.message).toMatch(
      /^lock "k": no majority \(2 of 3 nodes needed; [23] failed, 0 held\): /,
    );
  });
});

describe("an unreachable node", () => {
  it("keeps the cause fetch gave (bad port, connection refused), never the token", async () => {
    const token = "secret-token-0123456789abcdef0123456789";
    const closed = await closedPort();
    const failure = async (url: string): Promise<Error> => {
      const locks = createLocks({ nodes: [{ url, token }], requestTimeout: 1_000 });
      return (await locks.acquire("k").catch((e) => e)) as Error;
    };
    const badPort = await failure("http://127.0.0.1:1");
    expect(badPort.name).toBe("QuorumError");
    expect(badPort.message).toBe(
      'lock "k": no majority (1 of 1 nodes needed; 1 failed, 0 held): node 0 (127.0.0.1:1): unreachable (fetch failed: bad port)',
    );
    const refused = await failure(`http://127.0.0.1:${closed}`);
    expect(refused.message).toBe(
      `lock "k": no majority (1 of 1 nodes needed; 1 failed, 0 held): node 0 (127.0.0.1:${closed}): unreachable (fetch failed: ECONNREFUSED)`,
    );
    for (const error of [badPort, refused]) {
      expect(JSON.stringify(error)).not.toContain(token);
      expect(JSON.stringify(error.message)).not.toContain(token);
    }
  });
});

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}
