/**
 * The queue's scripts on a real redis-server, called directly (docs/SAFETY.md §2 P1–P4, the
 * table's ACQUIRE, RELEASE, HANDOVER, LEAVE, PASS, DISCARD rows): registration with the node's
 * time and the newest look, a hand-off to the first live waiter by place (skipping ended ones and
 * ones nobody listens for), its message, RELEASE's `before`, HANDOVER to an earlier waiter of
 * another instance, re-sends recognising the waiter handed to, PASS's look fence, and a queue key
 * of another type left alone. Replaces the reservation tests of wake.test.ts and room.test.ts.
 */
import type { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { ACQUIRE, DISCARD, EXTEND, HANDOVER, LEAVE, PASS, RELEASE } from "../../src/scripts";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 1 });
const r = (): Redis => dev.direct(0);
const subscribers: Redis[] = [];
afterAll(() => {
  for (const s of subscribers) s.disconnect();
});

const tok = (c: string) => c.repeat(32);
const [H, A, B, C, D, N] = ["1", "a", "b", "c", "d", "e"].map(tok) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
let n = 0;
/** A fresh lock: key, fence, queue, and a tombstone key for `token`. */
const lock = () => {
  const k = `qs:${n++}:${crypto.randomUUID()}`;
  return { k, f: `${k}:fence`, w: `${k}:wait`, keys: [k, `${k}:fence`, `${k}:wait`] };
};
/** A registration (ARGV of ACQUIRE from 4, of PASS from 2). */
const reg = (place: number, look: number, listener = "l1", waitMs = 60_000, handMs = 1_500) =>
  [place, look, listener, waitMs, handMs, 60_000, 0].map(String);
const acquire = (keys: string[], token: string, registration: string[] = [], ttl = 5_000) =>
  r().eval(ACQUIRE.lua, 3, ...keys, token, String(ttl), "0", ...registration) as Promise<number[]>;
const release = (keys: string[], token: string, before?: number) =>
  r().eval(RELEASE.lua, 3, ...keys, token, ...(before === undefined ? [] : [String(before)]));
/** A listener: every message published on `<w>:<id>` on the node. */
async function listen(w: string, id: string): Promise<string[]> {
  const sub = r().duplicate();
  subscribers.push(sub);
  const got: string[] = [];
  sub.on("message", (_, message: string) => got.push(message));
  await sub.subscribe(`${w}:${id}`);
  return got;
}
const record = async (w: string, token: string) => (await r().hget(w, token))?.split("|");
const until = async (check: () => boolean) => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((res) => setTimeout(res, 10));
};

describe("the queue's scripts on redis-server", () => {
  it("ACQUIRE registers a refused call with the node's time; only a newer look replaces it; a grant removes it", async () => {
    const { k, w, keys } = lock();
    await r().set(k, H, "PX", 5_000);
    const [flag, pttl, ahead] = await acquire(keys, A, reg(100, 2));
    expect([flag, ahead]).toEqual([0, -1]);
    expect(pttl).toBeGreaterThan(4_000);
    const [place, deadline, listener, look, p, handMs, fencing] = (await record(w, A)) ?? [];
    expect([place, listener, look, handMs, fencing]).toEqual(["100", "l1", "2", "1500", "0"]);
    expect(Number(deadline) - Number(p)).toBe(60_000);
    expect(await r().pttl(w)).toBeGreaterThan(55_000);
    await acquire(keys, A, reg(100, 1)); // a late, older look
    expect((await record(w, A))?.[3]).toBe("2");
    await acquire(keys, A, reg(100, 3));
    expect((await record(w, A))?.[3]).toBe("3");
    // The holder a node placed names its place: a refusal reports it (`ahead`).
    await r().hset(w, "^", `${H}|50|1|`);
    expect((await acquire(keys, B, reg(200, 1)))[2]).toBe(50);
    await r().del(k);
    // Free, but A (place 100) waits before B (place 200): handed to A, B refused.
    const handed = await listen(w, "l1");
    expect((await acquire(keys, B, reg(200, 2)))[0]).toBe(0);
    expect(await r().get(k)).toBe(A);
    await until(() => handed.length > 0);
    expect(handed[0]?.split("|").slice(0, 2)).toEqual([A, "3"]);
    // A's own look then finds its token (P2): granted, its record gone, `^` names it.
    expect(await acquire(keys, A, reg(100, 4))).toEqual([1, 0, -1]);
    expect(await record(w, A)).toBeUndefined();
    expect(await r().hget(w, "^")).toBe(`${A}|100|4|`);
  });

  it("RELEASE hands to the first live waiter by place: an ended wait and an unheard one are dropped", async () => {
    const { k, w, keys } = lock();
    await r().set(k, H, "PX", 5_000);
    const heard = await listen(w, "la");
    await acquire(keys, A, reg(300, 1, "la"));
    await acquire(keys, B, reg(100, 1, "nobody"));
    await acquire(keys, C, reg(200, 1, "la", 1)); // its wait ends 1 ms after registering
    await acquire(keys, D, reg(400, 1, "la"));
    await new Promise((res) => setTimeout(res, 20));
    expect(await release(keys, H)).toBe(1);
    expect(await r().get(k)).toBe(A);
    const left = await r().pttl(k);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(1_500);
    expect((await r().hkeys(w)).sort()).toEqual(["^", D].sort());
    expect(await r().hget(w, "^")).toBe(`${A}|300|1|${H}`);
    await until(() => heard.length > 0);
    await new Promise((res) => setTimeout(res, 20));
    expect(heard).toHaveLength(1);
    const [token, look, gap, handMs, fence] = (heard[0] ?? "").split("|");
    expect([token, look, handMs, fence]).toEqual([A, "1", "1500", "0"]);
    expect(Number(gap)).toBeGreaterThanOrEqual(0);
    // A re-send of the release recognises the waiter it handed to; another token does not.
    expect(await release(keys, H)).toBe(1);
    expect(await release(keys, B)).toBe(-1);
    expect(await r().get(k)).toBe(A);
  });

  it("RELEASE with `before` serves only waiters placed before it; else the key stays free", async () => {
    const { k, w, keys } = lock();
    await listen(w, "l1");
    await r().set(k, H, "PX", 5_000);
    await acquire(keys, A, reg(300, 1));
    expect(await release(keys, H, 200)).toBe(1);
    expect(await r().exists(k)).toBe(0);
    expect(await record(w, A)).toBeDefined();
    await r().set(k, B, "PX", 5_000);
    expect(await release(keys, B, 400)).toBe(1);
    expect(await r().get(k)).toBe(A);
    // A waiter placed in the same ms as the releaser's next caller (that caller itself, waiting
    // in the queue too) is served: a strict "before" left the key free while it waited.
    await r().set(k, C, "PX", 5_000);
    await acquire(keys, D, reg(500, 1));
    expect(await release(keys, C, 500)).toBe(1);
    expect(await r().get(k)).toBe(D);
  });

  it("a tie of places is broken by token: only the holder that comes first is told to the others (P4)", async () => {
    const { k, w, keys } = lock();
    // B holds, placed at 700 (`^` names it); A and C wait, placed in the same ms.
    await r().set(k, B, "PX", 5_000);
    await r().hset(w, "^", `${B}|700|1|`);
    // C comes after B (same place, larger token): told B's place, so C gives way.
    expect((await acquire(keys, C, reg(700, 1)))[2]).toBe(700);
    // A comes before B: not told, so A keeps what it holds elsewhere and B gives way to it.
    expect((await acquire(keys, A, reg(700, 1)))[2]).toBe(-1);
    // A caller placed earlier is never told; one placed later always is.
    expect((await acquire(keys, D, reg(699, 1)))[2]).toBe(-1);
    expect((await acquire(keys, D, reg(701, 2)))[2]).toBe(700);
    expect(await r().get(k)).toBe(B);
  });

  it("HANDOVER goes to an earlier waiter of another instance (flag 3), a re-send says so again", async () => {
    const { k, w, keys } = lock();
    await listen(w, "other");
    await r().set(k, H, "PX", 5_000);
    await acquire(keys, A, reg(100, 1, "other"));
    const handover = (token: string, next: string, place: number) =>
      r().eval(HANDOVER.lua, 3, ...keys, token, next, "5000", "0", String(place));
    expect(await handover(H, N, 200)).toEqual([3, 1_500, 1]);
    expect(await r().get(k)).toBe(A);
    const [flag, pttl, released] = (await handover(H, N, 200)) as number[];
    expect([flag, released]).toEqual([3, 1]);
    expect(pttl).toBeLessThanOrEqual(1_500);
    // No earlier waiter: the next local caller gets it, and `^` names who handed it.
    const second = lock();
    await r().set(second.k, H, "PX", 5_000);
    await acquire(second.keys, A, reg(300, 1, "other"));
    const to = await r().eval(HANDOVER.lua, 3, ...second.keys, H, N, "5000", "0", "200");
    expect(to).toEqual([1, 0, 1]);
    expect(await r().get(second.k)).toBe(N);
    expect(await r().hget(second.w, "^")).toBe(`${N}|200|0|${H}`);
  });

  it("PASS: a look numbered at or after the pass keeps its placement; a later pass gives it to an earlier waiter only, or frees it", async () => {
    const { k, w, keys } = lock();
    const void_ = `${k}:void:${A}`;
    const heard = await listen(w, "l1");
    expect((await acquire(keys, A, reg(100, 3)))[0]).toBe(1); // look 3 placed A
    await acquire(keys, B, reg(200, 1));
    const pass = (look: number) =>
      r().eval(PASS.lua, 4, ...keys, void_, A, ...reg(100, look)) as Promise<number[]>;
    // Pass 2 was sent before look 3 but ran after it: look 3's placement stays.
    expect((await pass(2))[0]).toBe(0);
    expect(await r().get(k)).toBe(A);
    expect(await record(w, A)).toBeUndefined();
    // Pass 4 with only a later waiter (B, place 200) here: kept — handing it to B would let a
    // later call overtake A, and helps nobody placed before A.
    expect((await pass(4))[0]).toBe(0);
    expect(await r().get(k)).toBe(A);
    // …and A is registered under look 4 beside its token: once the token lapses, the next
    // script that finds the key free serves A first, not B.
    expect((await record(w, A))?.[3]).toBe("4");
    await r().pexpire(k, 1);
    await new Promise((res) => setTimeout(res, 20));
    expect((await acquire(keys, B, reg(200, 2)))[0]).toBe(0);
    expect(await r().get(k)).toBe(A);
    // An earlier waiter (C, place 50) registers: pass 5 removes it, hands it to C (not B), and
    // registers A again under look 5.
    await acquire(keys, C, reg(50, 1));
    const [passed, pttl] = await pass(5);
    expect(passed).toBe(1);
    expect(await r().get(k)).toBe(C);
    expect(pttl).toBeLessThanOrEqual(1_500);
    expect((await record(w, A))?.[3]).toBe("5");
    await until(() => heard.some((m) => m.startsWith(`${C}|1|`)));
    expect(heard.some((m) => m.startsWith(`${C}|1|`))).toBe(true);
    // Nobody waiting: a pass frees the key (an earlier caller that polls takes it).
    const alone = lock();
    expect((await acquire(alone.keys, D, reg(300, 1)))[0]).toBe(1);
    const passAlone = (await r().eval(
      PASS.lua,
      4,
      ...alone.keys,
      `${alone.k}:void:${D}`,
      D,
      ...reg(300, 2),
    )) as number[];
    expect(passAlone[0]).toBe(1);
    expect(await r().get(alone.k)).toBeNull();
  });

  it("PASS keeps what an extension counted and a token with no holder record; EXTEND raises only its own record", async () => {
    const { k, w, keys } = lock();
    const pass = (token: string, look: number) =>
      r().eval(PASS.lua, 4, ...keys, `${k}:void:${token}`, token, ...reg(100, look)) as Promise<
        number[]
      >;
    const extend = (token: string) =>
      r().eval(
        EXTEND.lua,
        3,
        ...keys,
        token,
        "8000",
        ...EXTEND.args({ token, ttl: 8_000 }).slice(2),
      );
    // Look 1 placed A here; A was granted elsewhere and its extension found the token here.
    expect((await acquire(keys, A, reg(100, 1)))[0]).toBe(1);
    expect(await extend(A)).toBe(1);
    const held = (await r().hget(w, "^"))?.split("|") ?? [];
    expect([held[0], held[1], held[3]]).toEqual([A, "100", ""]);
    expect(Number(held[2])).toBeGreaterThan(1e13);
    // A's pass 2, sent before its grant, runs now: the counted token stays, nobody is served.
    expect(await pass(A, 2)).toEqual([0, expect.any(Number)]);
    expect(await r().get(k)).toBe(A);
    expect(await record(w, A)).toBeUndefined();
    // No holder record (the queue expired under the extended token): kept as well.
    await r().del(w);
    expect((await pass(A, 3))[0]).toBe(0);
    expect(await r().get(k)).toBe(A);
    // A late look of A (look 1, sent before pass 3) runs after the queue expired: it records A
    // as a holder no pass removes, so the late pass 3 keeps the token too (q10).
    expect((await acquire(keys, A, reg(100, 1)))[0]).toBe(1);
    expect(Number((await r().hget(w, "^"))?.split("|")[2])).toBeGreaterThan(1e13);
    expect((await pass(A, 3))[0]).toBe(0);
    expect(await r().get(k)).toBe(A);
    // Another call's extension never touches the record of this one.
    const other = lock();
    await acquire(other.keys, B, reg(200, 1));
    await r().hset(other.w, "^", `${B}|200|1|`);
    await r().eval(EXTEND.lua, 3, ...other.keys, C, "8000");
    expect(await r().hget(other.w, "^")).toBe(`${B}|200|1|`);
  });

  it("DISCARD takes back a key handed to the call, serves the next, and its tombstone refuses a late ACQUIRE", async () => {
    const { k, w, keys } = lock();
    await listen(w, "l1");
    await r().set(k, H, "PX", 5_000);
    await acquire(keys, A, reg(100, 1));
    await acquire(keys, B, reg(200, 1));
    await release(keys, H);
    expect(await r().get(k)).toBe(A);
    const tomb = `${k}:void:${A}`;
    expect(await r().eval(DISCARD.lua, 4, ...keys, tomb, A, "5000")).toBe(1);
    expect(await r().get(k)).toBe(B);
    const late = (await r().eval(
      ACQUIRE.lua,
      4,
      ...keys,
      tomb,
      A,
      "5000",
      "0",
      ...reg(100, 2),
    )) as number[];
    expect(late[0]).toBe(0);
    expect(await record(w, A)).toBeUndefined();
    expect(await r().get(k)).toBe(B);
  });

  it("LEAVE removes a call's record by token; a queue key of another type is never touched", async () => {
    const { k, w, keys } = lock();
    await r().set(k, H, "PX", 5_000);
    await acquire(keys, A, reg(100, 1));
    expect(await r().eval(LEAVE.lua, 3, ...keys, A)).toBe(1);
    expect(await record(w, A)).toBeUndefined();
    expect(await r().eval(LEAVE.lua, 3, ...keys, A)).toBe(0);
    const user = lock();
    await r().set(user.w, "user's");
    await r().set(user.k, H, "PX", 5_000);
    expect((await acquire(user.keys, A, reg(100, 1)))[0]).toBe(0);
    expect(await r().eval(LEAVE.lua, 3, ...user.keys, A)).toBe(0);
    expect(await release(user.keys, H)).toBe(1);
    expect(await acquire(user.keys, B)).toEqual([1, 0, -1]);
    expect(await r().get(user.w)).toBe("user's");
    expect(await r().pttl(user.w)).toBe(-1);
  });
});
