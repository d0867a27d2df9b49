/**
 * The semaphore's scripts on a real redis-server, called directly with the library's argument
 * builders (docs/design/semaphore.md §2 "One round picks one slot", §3 "What changes in the Lua";
 * the semaphore rows of docs/SAFETY.md §2): the first free slot in the call's order, finding the
 * token before placing it, S1 (never one token on two slots) under re-sends and hand-offs, an
 * earlier live waiter served before placing, the per-slot holder field `^<j>` and its newest look
 * (P2), a preference skipped and lapsed, the caller's P in its record, the tombstone (L3), release
 * re-send recognition, SEM_PASS's look fence (P4 per slot) and the trim.
 */
import type { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import {
  EXTEND,
  type QueueRegistration,
  type SemaphoreKeys,
  scriptKeys,
  semaphoreKeys,
} from "../../src/scripts";
import {
  DISCARD_SLOTS,
  RELEASE_SLOTS,
  SEM_ACQUIRE,
  SEM_INSPECT,
  SEM_PASS,
  type SemAcquireArgs,
} from "../../src/scripts/semaphore";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 1 });
const r = (): Redis => dev.direct(0);
const subscribers: Redis[] = [];
afterAll(() => {
  for (const s of subscribers) s.disconnect();
});

const tok = (c: string) => c.repeat(32);
const [T, A, B, H, X] = ["7", "a", "b", "1", "e"].map(tok) as [
  string,
  string,
  string,
  string,
  string,
];
let count = 0;
/** A fresh semaphore of `permits` slots. */
const sem = (permits = 3): SemaphoreKeys =>
  semaphoreKeys("ss:", `${count++}:${crypto.randomUUID()}`, permits);
/** The KEYS of a call: the slots in `order`, then `token`'s tombstone. */
const keysOf = (s: SemaphoreKeys, order: readonly number[], token: string) =>
  scriptKeys(
    order.map((j) => s.slots[j] as NonNullable<(typeof s.slots)[number]>),
    s.tombstone(token),
  );
const reg = (place: number, look: number, listener = "l1", waitMs = 60_000): QueueRegistration => ({
  place,
  look,
  listener,
  waitMs,
  handMs: 1_500,
  roomMs: 60_000,
  fencing: false,
});
type Look = Partial<Omit<SemAcquireArgs, "token" | "slots">>;
const acquire = (s: SemaphoreKeys, token: string, order: readonly number[], look: Look = {}) => {
  const keys = keysOf(s, order, token);
  const args = SEM_ACQUIRE.args({
    token,
    ttl: 5_000,
    slots: order,
    eligible: order.length,
    ...look,
  });
  return r().eval(SEM_ACQUIRE.lua, keys.length, ...keys, ...args) as Promise<number[]>;
};
const pass = (
  s: SemaphoreKeys,
  token: string,
  queue: QueueRegistration,
  keep?: number,
  preferMs = 60_000,
) => {
  const order = s.slots.map((_, j) => j);
  const keys = keysOf(s, order, token);
  const args = SEM_PASS.args({ token, slots: order, keep, preferMs, queue });
  return r().eval(SEM_PASS.lua, keys.length, ...keys, ...args) as Promise<number[]>;
};
const end = (
  script: typeof RELEASE_SLOTS,
  s: SemaphoreKeys,
  token: string,
  order = s.slots.map((_, j) => j),
) => {
  const keys = keysOf(s, order, token);
  const args = script.args({ token, slots: order, keepMs: 5_000 });
  return r().eval(script.lua, keys.length, ...keys, ...args) as Promise<number>;
};
/** The slots holding `token`. */
const slotsOf = async (s: SemaphoreKeys, token: string): Promise<number[]> => {
  const values = await Promise.all(s.slots.map((t) => r().get(t.lock)));
  return values.flatMap((v, j) => (v === token ? [j] : []));
};
const record = async (s: SemaphoreKeys, token: string) =>
  (await r().hget(s.room, token))?.split("|");
const put = (s: SemaphoreKeys, j: number, token: string, ms = 5_000) =>
  r().set(s.slots[j]?.lock as string, token, "PX", ms);
/** A listener: every message published on the room's channel `id`. */
async function listen(s: SemaphoreKeys, id = "l1"): Promise<string[]> {
  const sub = r().duplicate();
  subscribers.push(sub);
  const got: string[] = [];
  sub.on("message", (_, message: string) => got.push(message));
  await sub.subscribe(`${s.room}:${id}`);
  return got;
}
const until = async (check: () => boolean) => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((res) => setTimeout(res, 10));
};

describe("SEM_ACQUIRE on redis-server", () => {
  it("places the token on the first free slot in the call's order; refuses with every slot's PTTL in slot order", async () => {
    const s = sem();
    expect(await acquire(s, A, [2, 0, 1], { ttl: 3_000 })).toEqual([1, 2]);
    expect(await acquire(s, B, [2, 0, 1], { ttl: 5_000 })).toEqual([1, 0]);
    expect(await acquire(s, H, [1, 2, 0], { ttl: 7_000 })).toEqual([1, 1]);
    const refused = await acquire(s, T, [1, 2, 0]);
    expect(refused.slice(0, 2)).toEqual([0, -1]);
    const [p0, p1, p2] = refused.slice(2) as [number, number, number];
    // Slot order, whatever the call's order: 5 s on slot 0, 7 s on slot 1, 3 s on slot 2.
    expect(p2).toBeLessThan(p0);
    expect(p0).toBeLessThan(p1);
    expect(p2).toBeGreaterThan(2_000);
    expect(await slotsOf(s, T)).toEqual([]);
    // Slot 0 frees: a consolidating look at slot 1 (eligible 1) does not take it; a full look does.
    await r().del(s.slots[0]?.lock as string);
    const consolidating = await acquire(s, T, [1, 2, 0], { eligible: 1 });
    expect(consolidating[0]).toBe(0);
    expect(consolidating[2]).toBe(-2); // slot 0: free
    expect(consolidating[4]).toBeGreaterThan(0); // slot 2: A's
    expect(await acquire(s, T, [1, 2, 0])).toEqual([1, 0]);
    expect(SEM_ACQUIRE.parse(await acquire(s, T, [1, 2, 0]))).toEqual({ granted: true, slot: 0 });
  });

  it("finds the token on any slot (eligible or not) before placing: lengthens, never shortens, drops its record", async () => {
    const s = sem();
    await put(s, 2, T, 1_000);
    await r().hset(s.room, T, "100|1|l1|1|1|1500|0||0|3"); // a stale record, for the check below
    // Slot 0 is free and eligible, but the token is on slot 2: found, not placed again.
    expect(await acquire(s, T, [0, 1, 2], { eligible: 1 })).toEqual([1, 2]);
    expect(await slotsOf(s, T)).toEqual([2]);
    expect(await r().pttl(s.slots[2]?.lock as string)).toBeGreaterThan(4_000);
    expect(await record(s, T)).toBeUndefined();
    expect(await acquire(s, T, [1, 0, 2], { ttl: 500 })).toEqual([1, 2]);
    expect(await r().pttl(s.slots[2]?.lock as string)).toBeGreaterThan(4_000);
  });

  it("S1: re-sent and late looks in other orders, releases and hand-offs never leave one token on two slots", async () => {
    const s = sem(4);
    const heard = await listen(s);
    const tokens = [T, A, B, X];
    let seed = 7;
    const rand = (k: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % k;
    };
    const orderOf = () => {
      const offset = rand(4);
      return [0, 1, 2, 3].map((j) => (j + offset) % 4);
    };
    const looks = new Map<string, number>();
    for (let step = 0; step < 150; step++) {
      const token = tokens[rand(tokens.length)] as string;
      const op = rand(5);
      if (op <= 1) {
        // A look: a new one, or a re-send of an older one (a late request).
        const look = Math.max(1, (looks.get(token) ?? 0) + 1 - rand(3));
        looks.set(token, Math.max(look, looks.get(token) ?? 0));
        const place = 100 + tokens.indexOf(token);
        await acquire(s, token, orderOf(), {
          eligible: rand(2) === 0 ? 1 : 4,
          queue: reg(place, look),
        });
      } else if (op === 2) {
        await end(RELEASE_SLOTS, s, token);
        await r().del(s.tombstone(token)); // the same token acquires again in this test
      } else if (op === 3) {
        await r().del(s.slots[rand(4)]?.lock as string); // a slot expires
      } else {
        const j = rand(4);
        await acquire(s, H, [j], { ttl: 200 }); // someone else takes one slot for a moment
      }
      const where = await Promise.all(tokens.map((t) => slotsOf(s, t)));
      for (const [i, slots] of where.entries()) {
        expect(slots.length, `step ${step}: ${tokens[i]} on ${slots}`).toBeLessThanOrEqual(1);
        // A record only while on no slot.
        if (slots.length === 1) expect(await record(s, tokens[i] as string)).toBeUndefined();
      }
    }
    await until(() => heard.length > 0);
    expect(heard.length, "hand-offs in the run").toBeGreaterThan(0);
  });

  it("a hand-off then a late look: the look finds the handed slot and places nothing else", async () => {
    const s = sem();
    const heard = await listen(s);
    await put(s, 0, H);
    await put(s, 1, X);
    await put(s, 2, B);
    expect((await acquire(s, T, [0, 1, 2], { queue: reg(100, 1) }))[0]).toBe(0);
    expect(await end(RELEASE_SLOTS, s, X)).toBe(1);
    expect(await slotsOf(s, T)).toEqual([1]);
    await until(() => heard.length > 0);
    expect(heard[0]).toMatch(new RegExp(`^${T}\\|1\\|\\d+\\|1500\\|0\\|1$`));
    // Slot 2 frees; a late look of the call (look 1 again) in another order finds slot 1.
    await r().del(s.slots[2]?.lock as string);
    expect(await acquire(s, T, [2, 0, 1], { queue: reg(100, 1) })).toEqual([1, 1]);
    expect(await slotsOf(s, T)).toEqual([1]);
    expect(await r().get(s.slots[2]?.lock as string)).toBeNull();
  });

  it("serves earlier live waiters before placing: each free slot goes to the first that takes it, the caller gets the next", async () => {
    const s = sem();
    const heard = await listen(s);
    await put(s, 2, H);
    await acquire(s, H, [2], { queue: reg(10, 1) }); // finds its own slot: H stays on slot 2 only
    expect((await acquire(s, X, [2], { eligible: 1, queue: reg(900, 1) }))[0]).toBe(0);
    expect((await acquire(s, A, [2], { eligible: 1, queue: reg(50, 2) }))[0]).toBe(0);
    // T (place 100) looks with slots 0 and 1 free: slot 0 goes to A (place 50), T gets slot 1;
    // X (place 900) comes after T and waits.
    expect(await acquire(s, T, [0, 1, 2], { place: 100 })).toEqual([1, 1]);
    expect(await slotsOf(s, A)).toEqual([0]);
    expect(await record(s, A)).toBeUndefined();
    expect(await record(s, X)).toBeDefined();
    await until(() => heard.length > 0);
    expect(heard).toEqual([expect.stringMatching(new RegExp(`^${A}\\|2\\|\\d+\\|1500\\|0\\|0$`))]);
    // The holder of each slot, per slot: ^0 names A (its place and look), ^1 names T.
    expect(await r().hget(s.room, "^0")).toBe(`${A}|50|2|`);
    expect(await r().hget(s.room, "^1")).toBe(`${T}|100|0|`);
    expect(await r().hget(s.room, "^")).toBeNull();
    // Without a place (tryAcquire), every live waiter goes first.
    await r().del(s.slots[0]?.lock as string, s.slots[1]?.lock as string);
    expect((await acquire(s, B, [0, 1, 2]))[0]).toBe(1);
    expect(await slotsOf(s, X)).toEqual([0]);
    expect(await slotsOf(s, B)).toEqual([1]);
  });

  it("keeps each slot's holder in ^<j>: a newer look raises its look (P2), an older one does not, and `ahead` reads the first eligible slot's", async () => {
    const s = sem(2);
    await r().hset(s.room, "x", "0|0|l9|1|0|1500|0||0|2"); // a room exists (a stale, ended record)
    expect(await acquire(s, T, [1, 0], { queue: reg(100, 1) })).toEqual([1, 1]);
    expect(await r().hget(s.room, "^1")).toBe(`${T}|100|1|`);
    await acquire(s, T, [0, 1], { queue: reg(100, 3) });
    expect(await r().hget(s.room, "^1")).toBe(`${T}|100|3|`);
    await acquire(s, T, [0, 1], { queue: reg(100, 2) });
    expect(await r().hget(s.room, "^1")).toBe(`${T}|100|3|`);
    expect(await acquire(s, A, [0, 1], { queue: reg(200, 1) })).toEqual([1, 0]);
    // B (place 150) looks at slot 1 first: its holder T (place 100) is ahead; at slot 0, A
    // (place 200) is not.
    const first1 = await acquire(s, B, [1, 0], { queue: reg(150, 1) });
    expect(first1.slice(0, 2)).toEqual([0, 100]);
    expect((await acquire(s, B, [0, 1], { queue: reg(150, 2) })).slice(0, 2)).toEqual([0, -1]);
    expect(SEM_ACQUIRE.parse(first1)).toMatchObject({ granted: false, ahead: 100 });
  });

  it("a preference: other slots skip the record while it lasts, its own slot serves it first; then it lapses", async () => {
    const s = sem();
    const heard = await listen(s);
    await Promise.all([put(s, 0, H), put(s, 1, X), put(s, 2, B)]);
    // A (place 50) prefers slot 1; T (place 100) prefers nothing.
    await acquire(s, A, [1, 0, 2], { eligible: 1, prefer: 1, preferMs: 60_000, queue: reg(50, 1) });
    await acquire(s, T, [0, 1, 2], { queue: reg(100, 1) });
    const a = (await record(s, A)) ?? [];
    expect([a[7], a[9]]).toEqual(["1", "3"]);
    expect(Number(a[8]) - Number(a[4])).toBe(60_000);
    expect((await record(s, T))?.slice(7)).toEqual(["", "0", "3"]);
    // Slot 0 frees: A is skipped (it prefers 1), T takes it.
    await end(RELEASE_SLOTS, s, H);
    expect(await slotsOf(s, T)).toEqual([0]);
    expect(await slotsOf(s, A)).toEqual([]);
    // Slot 1 frees: it goes to A.
    await end(RELEASE_SLOTS, s, X);
    expect(await slotsOf(s, A)).toEqual([1]);
    await until(() => heard.length >= 2);
    expect(heard.map((m) => m.split("|")[5])).toEqual(["0", "1"]);
    // A preference that lapsed: any slot again.
    await end(RELEASE_SLOTS, s, A);
    await r().del(s.tombstone(A));
    await put(s, 1, X);
    await acquire(s, A, [1, 0, 2], { eligible: 1, prefer: 1, preferMs: 1, queue: reg(50, 2) });
    expect((await record(s, A))?.[7]).toBe("1");
    await new Promise((res) => setTimeout(res, 20));
    await end(RELEASE_SLOTS, s, B);
    expect(await slotsOf(s, A)).toEqual([2]);
  });

  it("the caller's P in its record: a P = 2 waiter is never handed slot 2", async () => {
    const wide = sem(3);
    const narrow = semaphoreKeys("", wide.room.slice(0, -":permits:wait".length), 2);
    expect(narrow.slots[1]).toEqual(wide.slots[1]);
    await listen(wide);
    await Promise.all([put(wide, 0, H), put(wide, 1, X), put(wide, 2, B)]);
    await acquire(narrow, A, [0, 1], { queue: reg(50, 1) });
    expect((await record(wide, A))?.[9]).toBe("2");
    await end(RELEASE_SLOTS, wide, B);
    expect(await r().get(wide.slots[2]?.lock as string)).toBeNull();
    expect(await record(wide, A)).toBeDefined();
    await end(RELEASE_SLOTS, wide, X);
    expect(await slotsOf(wide, A)).toEqual([1]);
  });
});

describe("the call's end on redis-server: tombstone, release, discard and trim", () => {
  it("a tombstone: SEM_ACQUIRE and SEM_PASS place and register nothing", async () => {
    const s = sem();
    await r().set(s.tombstone(T), "1", "PX", 9_000);
    const reply = await acquire(s, T, [0, 1, 2], { queue: reg(100, 1) });
    expect(reply[0]).toBe(3);
    expect(reply[1]).toBeGreaterThan(8_000);
    expect(SEM_ACQUIRE.parse(reply)).toMatchObject({ granted: false, ended: true });
    expect(await slotsOf(s, T)).toEqual([]);
    expect(await r().exists(s.room)).toBe(0);
    expect(await pass(s, T, reg(100, 2), 0)).toEqual([0, -1]);
    expect(await r().exists(s.room)).toBe(0);
  });

  it("RELEASE_SLOTS: frees the token's slot, hands it on, writes the tombstone; a re-send is recognised; others' slots are no -1", async () => {
    const s = sem();
    const heard = await listen(s);
    expect(await acquire(s, T, [0, 1, 2], { place: 100 })).toEqual([1, 0]);
    await Promise.all([put(s, 1, X), put(s, 2, B)]);
    await acquire(s, A, [0, 1, 2], { queue: reg(200, 1) });
    expect(await end(RELEASE_SLOTS, s, T)).toBe(1);
    expect(await slotsOf(s, A)).toEqual([0]);
    expect(await r().hget(s.room, "^0")).toBe(`${A}|200|1|${T}`);
    expect(await r().pttl(s.tombstone(T))).toBeGreaterThan(4_000);
    await until(() => heard.length > 0);
    // A re-send of the release: slot 0 holds A, handed on by T.
    expect(await end(RELEASE_SLOTS, s, T)).toBe(1);
    expect(await slotsOf(s, A)).toEqual([0]);
    // Someone who holds nothing here: 0, never -1.
    expect(await end(RELEASE_SLOTS, s, H)).toBe(0);
    // A late look of T after its release places nothing.
    await r().del(s.slots[1]?.lock as string);
    expect((await acquire(s, T, [1, 0, 2], { place: 100 }))[0]).toBe(3);
    expect(await slotsOf(s, T)).toEqual([]);
  });

  it("DISCARD_SLOTS: a give-up clears every slot and the record; a trim leaves the permit's slot alone", async () => {
    const s = sem();
    const heard = await listen(s);
    await Promise.all([put(s, 0, H), put(s, 1, X), put(s, 2, B)]);
    await acquire(s, T, [0, 1, 2], { queue: reg(100, 1) });
    await acquire(s, A, [0, 1, 2], { queue: reg(200, 1) });
    expect(await end(DISCARD_SLOTS, s, T)).toBe(0);
    expect(await record(s, T)).toBeUndefined();
    expect(await r().pttl(s.tombstone(T))).toBeGreaterThan(4_000);
    // Trim of A's call, granted on slot 1: A is on slot 2 here (a minority's hand-off), and the
    // trim (every slot but 1) frees it and serves it; slot 1 is not in the call.
    await r().set(s.slots[2]?.lock as string, A, "PX", 5_000);
    await r().hdel(s.room, A);
    const C = tok("c");
    await acquire(s, C, [0, 1, 2], { eligible: 1, queue: reg(300, 1) }); // C waits
    expect(await end(DISCARD_SLOTS, s, A, [0, 2])).toBe(1);
    expect(await r().get(s.slots[2]?.lock as string)).toBe(C);
    await until(() => heard.length > 0);
    // A trim sent to a node that holds the permit's own slot: untouched.
    const t = sem();
    await put(t, 1, A);
    expect(await end(DISCARD_SLOTS, t, A, [0, 2])).toBe(0);
    expect(await slotsOf(t, A)).toEqual([1]);
    expect(await r().exists(t.tombstone(A))).toBe(1);
  });
});

describe("SEM_PASS and SEM_INSPECT on redis-server", () => {
  it("passes slots older than its look, keeps the kept slot and newer looks' slots, and registers with the preference", async () => {
    const s = sem();
    const heard = await listen(s);
    // T on slot 2, placed by look 1; A waits. A pass numbered 2 keeping slot 0 frees slot 2.
    await acquire(s, T, [2, 0, 1], { eligible: 1, queue: reg(100, 1) });
    await Promise.all([put(s, 0, H), put(s, 1, X)]);
    await acquire(s, A, [0, 1, 2], { queue: reg(200, 1) });
    expect(await pass(s, T, reg(100, 2), 0, 5_000)).toEqual([1, -1]);
    expect(await slotsOf(s, A)).toEqual([2]);
    expect(await r().hget(s.room, "^2")).toBe(`${A}|200|1|${T}`);
    const rec = (await record(s, T)) ?? [];
    expect([rec[3], rec[7], rec[9]]).toEqual(["2", "0", "3"]);
    expect(Number(rec[8]) - Number(rec[4])).toBe(5_000);
    await until(() => heard.length > 0);
    // A look numbered at or after the pass placed it: kept (P4 per slot), nothing registered.
    const u = sem();
    await acquire(u, T, [1, 0, 2], { eligible: 1, queue: reg(100, 3) });
    expect(await pass(u, T, reg(100, 2))).toEqual([0, 1]);
    expect(await slotsOf(u, T)).toEqual([1]);
    expect(await record(u, T)).toBeUndefined();
    // The kept slot is never touched, whatever its look.
    const v = sem();
    await acquire(v, T, [0, 1, 2], { eligible: 1, queue: reg(100, 1) });
    expect(await pass(v, T, reg(100, 2), 0)).toEqual([0, 0]);
    expect(await slotsOf(v, T)).toEqual([0]);
    // No keep: every old slot passed, registered without a preference.
    expect(await pass(v, T, reg(100, 4))).toEqual([1, -1]);
    expect((await record(v, T))?.slice(7)).toEqual(["", "0", "3"]);
  });

  it("keeps a slot an extension counted (EXTEND with the slot's holder field) and a slot with no holder record", async () => {
    const s = sem();
    // T on slot 1, placed by look 1; the permit's extension (slot 1's triple) finds it there.
    await acquire(s, T, [1, 0, 2], { eligible: 1, queue: reg(100, 1) });
    const slot = s.slots[1] as SemaphoreKeys["slots"][number];
    const args = EXTEND.args({ token: T, ttl: 8_000, holder: slot.holder });
    expect(await r().eval(EXTEND.lua, 3, slot.lock, slot.fence, slot.room, ...args)).toBe(1);
    expect(Number((await r().hget(s.room, "^1"))?.split("|")[2])).toBeGreaterThan(1e13);
    // A pass numbered 2 keeping nothing, sent before the grant, runs late: slot 1 stays.
    expect(await pass(s, T, reg(100, 2))).toEqual([0, 1]);
    expect(await slotsOf(s, T)).toEqual([1]);
    // With no record of slot 1's holder (the room expired under the extended permit), it stays
    // too; and a late look (look 1) that finds it then records a look no pass reaches (q10).
    await r().del(s.room);
    expect(await pass(s, T, reg(100, 3))).toEqual([0, 1]);
    expect(await acquire(s, T, [1, 0, 2], { eligible: 1, queue: reg(100, 1) })).toEqual([1, 1]);
    expect(Number((await r().hget(s.room, "^1"))?.split("|")[2])).toBeGreaterThan(1e13);
    expect(await pass(s, T, reg(100, 4))).toEqual([0, 1]);
    expect(await slotsOf(s, T)).toEqual([1]);
  });

  it("SEM_INSPECT reads each slot's PTTL in the order given", async () => {
    const s = sem();
    await put(s, 1, X, 7_000);
    const keys = scriptKeys(s.slots);
    const pttls = (await r().eval(SEM_INSPECT.lua, keys.length, ...keys)) as number[];
    expect(pttls[0]).toBe(-2);
    expect(pttls[1]).toBeGreaterThan(6_000);
    expect(pttls[2]).toBe(-2);
    expect(SEM_INSPECT.parse(pttls)).toEqual(pttls);
  });
});
