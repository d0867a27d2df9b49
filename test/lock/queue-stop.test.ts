/**
 * A queued call that stops without a grant (aborted, or its wait over) on 3 redis-servers
 * (docs/SAFETY.md §2 L3, §3 "queued wait"): it leaves no record in any node's queue and no token
 * on any key, and its tombstone stands on every node, so a late ACQUIRE of its call registers and
 * places nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLocks, isLockBusyError, type Locks } from "../../src/index";
import { ACQUIRE } from "../../src/scripts";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, readBack, resetCluster, uniquePrefix } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });
afterEach(() => resetCluster(dev.cluster));

const instance = (prefix: string): Locks =>
  createLocks({
    nodes: dev.cluster.nodes.map((n) => ({ url: n.url, token: n.token })),
    prefix,
    lease: 5_000,
    retryDelayMax: 300,
  });

const tokensIn = async (i: number, room: string) =>
  (await dev.direct(i).hkeys(room)).filter((field) => field !== "^");

/** Wait until the call is in every node's queue; its token. */
async function queued(room: string): Promise<string> {
  let token: string | undefined;
  await eventually(async () => {
    const all = await Promise.all([0, 1, 2].map((i) => tokensIn(i, room)));
    token = all[0]?.[0];
    return all.every((tokens) => tokens.length === 1 && tokens[0] === token);
  }, 10_000);
  return token as string;
}

/** Nothing of `token` on any node but its tombstone; a late ACQUIRE of its call does nothing. */
async function gone(prefix: string, token: string): Promise<void> {
  const [k, room] = [`${prefix}k`, `${prefix}k:wait`];
  const tomb = `${k}:void:${token}`;
  // The cleanup goes out in the background once the call rejected.
  await eventually(async () => (await readBack(dev, N, tomb)).every((v) => v !== null));
  for (let i = 0; i < N; i++) {
    expect(await tokensIn(i, room)).toEqual([]);
    expect(await dev.direct(i).get(k)).not.toBe(token);
    expect(await dev.direct(i).pttl(tomb)).toBeGreaterThan(0);
    const registration = [Date.now(), 9, "late", 60_000, 1_000, 60_000, 0].map(String);
    const keys = [k, `${k}:fence`, room, tomb];
    const late = (await dev
      .direct(i)
      .eval(ACQUIRE.lua, 4, ...keys, token, "5000", "0", ...registration)) as number[];
    expect(late[0]).toBe(0);
    expect(late[2]).toBe(-1);
    expect(await tokensIn(i, room)).toEqual([]);
    expect(await dev.direct(i).get(k)).not.toBe(token);
  }
}

describe("a queued call that stops", () => {
  it("aborted: no record, no token anywhere, and its tombstone refuses a late ACQUIRE", async () => {
    const prefix = uniquePrefix("qabort");
    const holder = await instance(prefix).acquire("k");
    const controller = new AbortController();
    const pending = instance(prefix).acquire("k", { wait: 15_000, signal: controller.signal });
    const outcome = pending.then(
      () => "granted",
      (e: unknown) => e,
    );
    const token = await queued(`${prefix}k:wait`);
    controller.abort(new Error("stop"));
    expect(((await outcome) as Error).message).toBe("stop");
    await gone(prefix, token);
    await holder.release();
    // The release served nobody: the key is free on every node.
    expect(await readBack(dev, N, `${prefix}k`)).toEqual([null, null, null]);
  }, 30_000);

  it("its wait over: LockBusyError, then no record, no token anywhere, and a tombstone", async () => {
    const prefix = uniquePrefix("qover");
    const holder = await instance(prefix).acquire("k");
    const outcome = instance(prefix)
      .acquire("k", { wait: 1_500 })
      .then(
        () => "granted",
        (e: unknown) => e,
      );
    const token = await queued(`${prefix}k:wait`);
    expect(isLockBusyError(await outcome)).toBe(true);
    await gone(prefix, token);
    await holder.release();
    expect(await readBack(dev, N, `${prefix}k`)).toEqual([null, null, null]);
  }, 30_000);
});
