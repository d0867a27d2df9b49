/**
 * What a user is told when something is wrong (docs/SAFETY.md §6 "What a caller is told"), on
 * real servers: a down quorum is a `QuorumError`, never "busy"; a rejected token fails at once and
 * says what to fix; a budget that cannot cover a useful grant is refused; every message names each
 * node and its reason.
 */
import { afterEach, describe, expect, it } from "vitest";
import { withLock } from "../../src/adapters/lambda/index";
import { budget, createLocks, type LockEvent, type LocksOptions } from "../../src/index";
import { fakeContext } from "../lambda/helpers";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, readBack, requests, resetCluster, uniquePrefix } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });
const WRONG = "wrong-token-0123456789abcdef0123456789";

afterEach(() => {
  for (const control of dev.cluster.controls) control.resume();
  resetCluster(dev.cluster);
});

const hostOf = (i: number) => new URL(dev.cluster.nodes[i]?.url ?? "").host;

function setup(name: string, options: Partial<LocksOptions> = {}) {
  const events: LockEvent[] = [];
  const locks = createLocks({
    nodes: dev.cluster.nodes,
    prefix: uniquePrefix(name),
    requestTimeout: 200,
    onEvent: (e) => events.push(e),
    ...options,
  });
  return { locks, events };
}

/** The nodes with node `i`'s token replaced for every `i` in `wrong`. */
const withWrongTokens = (...wrong: number[]) =>
  dev.cluster.nodes.map((node, i) => (wrong.includes(i) ? { ...node, token: WRONG } : node));

describe("a down quorum is unavailable, not busy", () => {
  it.each(["one shared instance", "separate instances"])(
    "nodes 1 and 2 paused, five concurrent acquires (%s): five QuorumErrors naming both nodes",
    async (mode) => {
      const shared = setup("down");
      const managers = Array.from({ length: 5 }, () =>
        mode === "one shared instance" ? shared.locks : setup("down").locks,
      );
      dev.cluster.controls[1]?.pause();
      dev.cluster.controls[2]?.pause();
      const results = await Promise.allSettled(managers.map((l) => l.acquire("k1")));
      const names = results.map((r) => (r.status === "rejected" ? (r.reason as Error).name : "ok"));
      expect(names).toEqual(Array(5).fill("QuorumError"));
      for (const r of results) {
        const { message } = (r as PromiseRejectedResult).reason as Error;
        expect(message).toContain('lock "k1": no majority (2 of 3 nodes needed;');
        expect(message).toContain(`node 1 (${hostOf(1)}): no answer`);
        expect(message).toContain(`node 2 (${hostOf(2)}): no answer`);
      }
    },
  );

  it("busy only when holders alone rule out a majority; the message names them", async () => {
    const prefix = uniquePrefix("busy");
    const holder = await setup("busy", { prefix }).locks.acquire("k");
    // Granted at a majority: wait until the third node holds it too, so no node can grant us.
    await eventually(async () =>
      (await readBack(dev, N, `${prefix}k`)).every((v) => v === holder.token),
    );
    const busy = (await setup("busy", { prefix })
      .locks.acquire("k")
      .catch((e) => e)) as Error;
    expect(busy.name).toBe("LockBusyError");
    // The round is decided once two nodes refused: any one node may still be in flight.
    const parts =
      /^lock "k" is busy: held on ([23]) of 3 nodes asked, free in at most \d+ ms \((.+)\)$/.exec(
        busy.message,
      );
    const perNode = parts?.[2]?.split("; ") ?? [];
    expect(perNode).toHaveLength(3);
    perNode.forEach((text, i) => {
      const node = `node ${i} (${hostOf(i)}): `;
      expect(text.startsWith(node)).toBe(true);
      expect(text.slice(node.length)).toMatch(
        /^(held by another caller for \d+ ms more|no answer yet)$/,
      );
    });
    const held = perNode.filter((text) => text.includes("held by another caller")).length;
    expect(held).toBe(Number(parts?.[1]));
    await holder.release();
  });
});

describe("a rejected token", () => {
  it("on every node: fails at once (one attempt, no retries within wait) and says what to fix", async () => {
    const { locks, events } = setup("auth-all", { nodes: withWrongTokens(0, 1, 2) });
    const error = (await locks.acquire("k", { wait: 5_000 }).catch((e) => e)) as Error;
    expect(error.name).toBe("QuorumError");
    expect(events.filter((e) => e.type === "acquire")).toHaveLength(1);
    // Decided once two nodes refused; the third may still be in flight ("no answer yet").
    const rejected = (i: number) =>
      `node ${i} (${hostOf(i)}): rejected the token (HTTP 401 Unauthorized): check this node's token`;
    expect(error.message).toMatch(
      new RegExp(
        `^lock "k": check the nodes' tokens \\(EDGELOCK_NODES or the nodes option\\): node 0 \\(${hostOf(0)}\\), node 1 \\(${hostOf(1)}\\)(, node 2 \\(${hostOf(2)}\\))? reject the token\\. no majority \\(2 of 3 nodes needed; [23] failed, 0 held\\): `,
      ),
    );
    expect(error.message).toContain(`${rejected(0)}; ${rejected(1)}; node 2 (${hostOf(2)}): `);
    expect(error.message).not.toContain(WRONG);
    expect(JSON.stringify(events)).not.toContain(WRONG);
  });

  it("on a majority: fails at once too; a minority: works, and onEvent tells once", async () => {
    const majority = setup("auth-majority", { nodes: withWrongTokens(0, 2) });
    const error = (await majority.locks.acquire("k", { wait: 5_000 }).catch((e) => e)) as Error;
    expect(error.name).toBe("QuorumError");
    expect(majority.events.filter((e) => e.type === "acquire")).toHaveLength(1);
    expect(error.message.startsWith(`lock "k": check the nodes' tokens`)).toBe(true);

    const minority = setup("auth-minority", { nodes: withWrongTokens(2) });
    for (let i = 0; i < 3; i++) await (await minority.locks.acquire(`k${i}`)).release();
    await new Promise((r) => setTimeout(r, 50));
    const rejected = minority.events.filter((e) => e.type === "rejected");
    expect(rejected).toEqual([
      {
        type: "rejected",
        index: 2,
        host: hostOf(2),
        message: `node 2 (${hostOf(2)}): rejected the token (HTTP 401 Unauthorized): check this node's token`,
      },
    ]);
    const inspected = await minority.locks.inspect("k0");
    expect(inspected.nodes[2]?.error?.kind).toBe("auth");
  });

  it("mixed with an outage: both named, no configuration advice first", async () => {
    const { locks } = setup("auth-mixed", { nodes: withWrongTokens(0) });
    dev.cluster.controls[1]?.pause();
    const error = (await locks.acquire("k").catch((e) => e)) as Error;
    expect(error.name).toBe("QuorumError");
    expect(error.message.startsWith('lock "k": no majority')).toBe(true);
    expect(error.message).toContain(`node 0 (${hostOf(0)}): rejected the token`);
    expect(error.message).toContain(`node 1 (${hostOf(1)}): no answer within 200 ms`);
  });
});

describe("budgets and releases", () => {
  it("budget.within(10) cannot cover a useful grant: BudgetExhaustedError, no node called", async () => {
    const { locks } = setup("budget");
    resetCluster(dev.cluster);
    const error = (await locks
      .acquire("k", { budget: budget.within(10) })
      .catch((e) => e)) as Error;
    expect(error.name).toBe("BudgetExhaustedError");
    expect(error.message).toMatch(
      /^budget exhausted: \d+ ms left; a useful grant needs 210 ms: a round of up to 200 ms plus minValidity \(10 ms\)$/,
    );
    expect(requests(dev.cluster)).toBe(0);
    const lock = await locks.acquire("k", { budget: budget.within(2_000) });
    await lock.release();
  });

  it("the extension's LockLostError names the nodes where our token is gone", async () => {
    const prefix = uniquePrefix("lost");
    const { locks } = setup("lost", { prefix });
    const lock = await locks.acquire("k");
    await dev.direct(0).del(`${prefix}k`);
    await dev.direct(1).del(`${prefix}k`);
    const error = (await lock.extend().catch((e) => e)) as Error;
    expect(error.name).toBe("LockLostError");
    expect(error.message).toBe(
      `lock "k" lost: expired or taken over on 2 of 3 nodes (node 0 (${hostOf(0)}): our token is gone; node 1 (${hostOf(1)}): our token is gone)`,
    );
    await lock.release();
  });

  it("withLock returns only after every node answered the release (a slow node included)", async () => {
    const prefix = uniquePrefix("settle");
    const { locks } = setup("settle", { prefix, requestTimeout: 2_000 });
    const handler = withLock(
      async () => {
        // The next request to node 2 (the release) takes 300 ms; the other two answer at once.
        dev.cluster.controls[2]?.inject({ kind: "latency", ms: 300, count: 1 });
        return "done";
      },
      { locks, key: () => "k" },
    );
    expect(await handler({}, fakeContext(10_000))).toBe("done");
    // Read at once, without waiting: nothing is left on any node.
    expect(await readBack(dev, N, `${prefix}k`)).toEqual([null, null, null]);
  });
});
