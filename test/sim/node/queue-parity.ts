/**
 * The harness of the queue's parity suites (parity-queue*.test.ts): each case runs the same setup
 * and script call on the simulated node and on a real redis-server (docs/SAFETY.md §7), with a
 * subscriber on the channels it names (PUBLISH answers 1 there, 0 elsewhere: a hand-off sets the
 * key only when someone listens), then compares the reply, every key (value, hash, PTTL) and the
 * messages published. Fields read from the node's clock (`TIME`) — a record's `p` and deadline, a
 * message's `gap` — are compared by shape: the simulated node's clock is frozen at the case's
 * start, the server's runs on.
 */
import type { Redis } from "ioredis";
import { expect } from "vitest";
import { SimNode } from "../../../src/memory";
import type { Script } from "../../../src/scripts";
import { sha1 } from "./sha1";

export interface Case {
  readonly name: string;
  readonly setup?: readonly (readonly string[])[];
  readonly script: Script<unknown>;
  readonly args: readonly string[];
  /** Default: one lock with its tombstone key (`k`, `f`, `w`, `v`). */
  readonly keys?: readonly string[];
  /** Queues whose listener `abc` has a subscriber. */
  readonly listen?: readonly string[];
}

export const T = "t0ken";
export const [A, B, C, D] = ["aaaa", "bbbb", "cccc", "dddd"];
export const hold = (value: string, ms = "9000", key = "k") => ["SET", key, value, "PX", ms];
export const fence = (n: number, key = "f") => ["SET", key, String(n)];
/** A waiting call's record: `place|deadline|listener|look|p|handMs|fencing`. */
export const q = (
  token: string,
  place: string,
  look: string,
  more: Partial<Record<string, string>> = {},
) => {
  const { listener = "abc", deadline = "$far", handMs = "1500", fencing = "0", queue = "w" } = more;
  return [
    "HSET",
    queue,
    token,
    [place, deadline, listener, look, "$now", handMs, fencing].join("|"),
  ];
};
/** The holder a node placed: `token|place|look|from`. */
export const caret = (token: string, place: string, look: string, from = "", queue = "w") => [
  "HSET",
  queue,
  "^",
  `${token}|${place}|${look}|${from}`,
];
/** A registration (ARGV of ACQUIRE from 4, of PASS from 2). */
export const reg = (place: string, look: string, fencing = "0") =>
  [place, look, "abc", "60000", "1500", "60000", fencing] as const;
export const tomb = ["SET", "v", "1", "PX", "9000"];
export const ONE = ["k", "f", "w"];
export const TWO = ["k", "f", "w", "k2", "f2", "w2"];

/**
 * A record's clock fields by shape: `p` as "T", the deadline as "T+<wait>", and a semaphore
 * record's `preferUntil` (its 9th field of 10) as "T+<preferMs>" ("0" for none).
 */
function shape(flat: unknown): unknown {
  if (!Array.isArray(flat)) return flat;
  return flat.map((value, i) => {
    const parts = String(value).split("|");
    if (i % 2 === 0 || (parts.length !== 7 && parts.length !== 10)) return value;
    const [place, deadline, listener, look, p, ...rest] = parts;
    if (parts.length === 10 && rest[3] !== "0") rest[3] = `T+${Number(rest[3]) - Number(p)}`;
    return [place, `T+${Number(deadline) - Number(p)}`, listener, look, "T", ...rest].join("|");
  });
}
/** A message's gap by shape. */
const gapless = (m: string) => m.replace(/^(\S+ [^|]*\|[^|]*\|)\d+\|/, "$1G|");

/**
 * Run case `c` on a fresh simulated node and on `real` under `prefix`, and compare the replies,
 * the keys and the messages published.
 */
export async function compare(real: Redis, c: Case, prefix: string): Promise<void> {
  const now = Date.now();
  const fill = (text: string) =>
    text
      .replaceAll("$now", String(now))
      .replaceAll("$far", String(now + 60_000))
      .replaceAll("$past", String(now - 1_000));
  const name = (key: string) => `${prefix}${key}`;
  const keys = (c.keys ?? [...ONE, "v"]).map(name);
  const heard = new Set((c.listen ?? []).map((queue) => `${name(queue)}:abc`));
  const simPublished: string[] = [];
  const sim = new SimNode({
    now: () => now,
    sha1,
    onPublish: (ch, m) => {
      if (!heard.has(ch)) return 0;
      simPublished.push(`${ch} ${m}`);
      return 1;
    },
  });
  const realPublished: string[] = [];
  let sub: Redis | undefined;
  if (heard.size > 0) {
    sub = real.duplicate();
    sub.on("message", (ch: string, m: string) => realPublished.push(`${ch} ${m}`));
    await sub.subscribe(...heard);
  }
  try {
    for (const argv of c.setup ?? []) {
      const [cmd = "", key = "", ...rest] = argv.map(fill);
      sim.command([cmd, name(key), ...rest]);
      await real.call(cmd, name(key), ...rest);
    }
    const args = c.args.map(fill);
    const simReply = sim.eval(c.script.lua, keys, args);
    const realReply = await real.eval(c.script.lua, keys.length, ...keys, ...args);
    const slack = Date.now() - now + 50;
    expect(simReply.ok).toBe(true);
    const simValue = simReply.ok ? simReply.value : undefined;
    // Equal, except PTTLs (numbers above 50) may be lower on the real node by the time passed.
    const close = (s: unknown, r: unknown): boolean =>
      Array.isArray(s) && Array.isArray(r)
        ? s.length === r.length && s.every((v, i) => close(v, r[i]))
        : typeof s === "number" && typeof r === "number" && s > 50
          ? s - r >= 0 && s - r <= slack
          : s === r;
    expect(
      close(simValue, realReply),
      `${JSON.stringify(simValue)} vs ${JSON.stringify(realReply)}`,
    ).toBe(true);
    expect(c.script.parse(realReply)).toBeDefined();
    for (const key of keys) {
      const type = await real.type(key);
      expect(sim.type(key), `type of ${key}`).toBe(type);
      if (type === "string") expect(sim.get(key), key).toBe(await real.get(key));
      if (type === "hash") {
        const flat = await real.eval("return redis.call('HGETALL', KEYS[1])", 1, key);
        expect(shape(sim.command(["HGETALL", key])), key).toEqual(shape(flat));
      }
      const realPttl = await real.pttl(key);
      const simPttl = sim.pttl(key);
      if (realPttl < 0) expect(simPttl, `pttl of ${key}`).toBe(realPttl);
      else expect(simPttl - realPttl, `pttl of ${key}`).toBeGreaterThanOrEqual(0);
      if (realPttl >= 0) expect(simPttl - realPttl).toBeLessThanOrEqual(Date.now() - now + 50);
    }
    for (let i = 0; i < 50 && realPublished.length < simPublished.length; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(simPublished.map(gapless)).toEqual(realPublished.map(gapless));
  } finally {
    sub?.disconnect();
  }
}
