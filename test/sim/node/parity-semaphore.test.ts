/**
 * The semaphore's scripts, every branch (SEM_ACQUIRE's tombstone, find, place, serve-before-place
 * with its skips, refusal with `ahead`; SEM_PASS; RELEASE_SLOTS; DISCARD_SLOTS and the trim;
 * SEM_INSPECT): simulated node = redis-server, so the memory nodes and the simulation run them as
 * Redis does. Keys: slots `p0`…`p2` with fence keys `f0`…`f2`, the one room `w`, the call's
 * tombstone `v`. The harness and what it compares: queue-parity.ts.
 */
import { describe, it } from "vitest";
import {
  DISCARD_SLOTS,
  RELEASE_SLOTS,
  SEM_ACQUIRE,
  SEM_INSPECT,
  SEM_PASS,
} from "../../../src/scripts/semaphore";
import { useDevCluster } from "../../support/dev-cluster";
import { A, B, type Case, compare, hold, reg, T, tomb } from "./queue-parity";

const dev = useDevCluster({ nodes: 1 });

/** The KEYS of a call: the slots in `order` (one room `w`), then the tombstone `v`. */
const K = (order: readonly number[], tombstone = true) => [
  ...order.flatMap((j) => [`p${j}`, `f${j}`, "w"]),
  ...(tombstone ? ["v"] : []),
];
const ALL = [0, 1, 2];
/** Slot j held by `value`. */
const slot = (j: number, value: string, ms = "9000") => hold(value, ms, `p${j}`);
/** Slot j's holder as the room keeps it: `^<j>` = `token|place|look|from`. */
const hat = (j: number, token: string, place: string, look: string, from = "") => [
  "HSET",
  "w",
  `^${j}`,
  `${token}|${place}|${look}|${from}`,
];
/** A semaphore waiter's record: `place|deadline|listener|look|p|handMs|fencing|prefer|until|P`. */
const sq = (
  token: string,
  place: string,
  look: string,
  more: Partial<Record<"deadline" | "listener" | "prefer" | "until" | "permits", string>> = {},
) => {
  const { deadline = "$far", listener = "abc", prefer = "", until = "0", permits = "3" } = more;
  return [
    "HSET",
    "w",
    token,
    [place, deadline, listener, look, "$now", "1500", "0", prefer, until, permits].join("|"),
  ];
};
/** SEM_ACQUIRE's ARGV. */
const acq = (
  order: readonly number[],
  more: {
    token?: string;
    ttl?: string;
    eligible?: number;
    prefer?: string;
    preferMs?: string;
    place?: readonly string[];
  } = {},
) => [
  more.token ?? T,
  more.ttl ?? "5000",
  "0",
  String(more.eligible ?? order.length),
  order.join(","),
  more.prefer ?? "",
  more.preferMs ?? "0",
  ...(more.place ?? []),
];
/** SEM_PASS's ARGV (all three slots in order). */
const pass = (keep: string, look: string) => [T, "0,1,2", keep, "4000", ...reg("100", look)];
const end = (order: readonly number[] = ALL) => [T, order.join(","), "5000"];

const CASES: readonly Case[] = [
  // SEM_ACQUIRE: the tombstone, find, place.
  {
    name: "acquire tombstoned",
    setup: [tomb],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: reg("100", "1") }),
    keys: K(ALL),
  },
  { name: "acquire all free", script: SEM_ACQUIRE, args: acq([2, 0, 1]), keys: K([2, 0, 1]) },
  {
    name: "acquire: the first free in the call's order",
    setup: [slot(2, "x")],
    script: SEM_ACQUIRE,
    args: acq([2, 0, 1]),
    keys: K([2, 0, 1]),
  },
  {
    name: "acquire finds its token on a slot not eligible, longer",
    setup: [slot(2, T, "1000")],
    script: SEM_ACQUIRE,
    args: acq(ALL, { eligible: 1 }),
    keys: K(ALL),
  },
  {
    name: "acquire finds its token, never shorter",
    setup: [slot(1, T)],
    script: SEM_ACQUIRE,
    args: acq(ALL, { ttl: "1000" }),
    keys: K(ALL),
  },
  {
    name: "acquire finds its token: a newer look raises ^<j>, a stale record goes",
    setup: [slot(1, T), hat(1, T, "100", "1"), sq(T, "100", "1")],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: reg("100", "3") }),
    keys: K(ALL),
  },
  {
    name: "acquire finds its token: an older look leaves ^<j>",
    setup: [slot(1, T), hat(1, T, "100", "4")],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: reg("100", "3") }),
    keys: K(ALL),
  },
  {
    name: "acquire placed with a registration: ^<j> written",
    setup: [slot(0, "x")],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: reg("100", "2") }),
    keys: K(ALL),
  },
  {
    name: "acquire placed without a registration where a room exists",
    setup: [slot(0, "x"), hat(0, "x", "50", "1"), sq(A, "900", "1")],
    listen: ["w"],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: ["100"] }),
    keys: K(ALL),
  },
  // SEM_ACQUIRE: a free slot goes to an earlier live waiter first.
  {
    name: "acquire: the free slot to an earlier waiter, the caller on the next",
    setup: [sq(A, "50", "2")],
    listen: ["w"],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: reg("100", "1") }),
    keys: K(ALL),
  },
  {
    name: "acquire: every free slot to earlier waiters, refused with ahead",
    setup: [slot(2, "x"), sq(A, "50", "2"), sq(B, "60", "1")],
    listen: ["w"],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: reg("100", "1") }),
    keys: K(ALL),
  },
  {
    name: "acquire: nobody listens for the earlier waiter",
    setup: [sq(A, "50", "2")],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: ["100"] }),
    keys: K(ALL),
  },
  {
    name: "acquire: the earlier waiter's wait ended",
    setup: [sq(A, "50", "2", { deadline: "$past" })],
    listen: ["w"],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: ["100"] }),
    keys: K(ALL),
  },
  {
    name: "acquire: a later waiter waits",
    setup: [sq(A, "900", "2")],
    listen: ["w"],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: ["100"] }),
    keys: K(ALL),
  },
  {
    name: "acquire without a place serves every waiter first",
    setup: [sq(A, "900", "2"), sq(B, "950", "1")],
    listen: ["w"],
    script: SEM_ACQUIRE,
    args: acq([1, 2, 0]),
    keys: K([1, 2, 0]),
  },
  {
    name: "acquire: an earlier waiter preferring another slot is skipped",
    setup: [sq(A, "50", "2", { prefer: "2", until: "$far" })],
    listen: ["w"],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: ["100"] }),
    keys: K(ALL),
  },
  {
    name: "acquire: an earlier waiter preferring this slot is served",
    setup: [sq(A, "50", "2", { prefer: "0", until: "$far" })],
    listen: ["w"],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: ["100"] }),
    keys: K(ALL),
  },
  {
    name: "acquire: a lapsed preference is served any slot",
    setup: [sq(A, "50", "2", { prefer: "2", until: "$past" })],
    listen: ["w"],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: ["100"] }),
    keys: K(ALL),
  },
  {
    name: "acquire: an earlier waiter of a smaller P is not handed a slot beyond it",
    setup: [slot(0, "x"), slot(1, "y"), sq(A, "50", "2", { permits: "2" })],
    listen: ["w"],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: ["100"] }),
    keys: K(ALL),
  },
  // SEM_ACQUIRE: refused.
  {
    name: "acquire refused registers (no preference)",
    setup: [slot(0, "x", "3000"), slot(1, "y", "7000"), slot(2, "z")],
    script: SEM_ACQUIRE,
    args: acq([1, 2, 0], { place: reg("100", "1") }),
    keys: K([1, 2, 0]),
  },
  {
    name: "acquire refused registers with a preference",
    setup: [slot(0, "x"), slot(1, "y"), slot(2, "z")],
    script: SEM_ACQUIRE,
    args: acq([1, 0, 2], { eligible: 1, prefer: "1", preferMs: "2500", place: reg("100", "2") }),
    keys: K([1, 0, 2]),
  },
  {
    name: "acquire refused, an older look keeps the record",
    setup: [slot(0, "x"), slot(1, "y"), slot(2, "z"), sq(T, "100", "3")],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: reg("100", "2") }),
    keys: K(ALL),
  },
  {
    name: "acquire refused reports the first eligible slot's earlier holder",
    setup: [
      slot(0, "x"),
      slot(1, "y"),
      slot(2, "z"),
      hat(1, "y", "50", "1"),
      hat(0, "x", "20", "1"),
    ],
    script: SEM_ACQUIRE,
    args: acq([1, 2, 0], { place: reg("100", "1") }),
    keys: K([1, 2, 0]),
  },
  {
    name: "acquire refused, ^<j> of another holder: no place",
    setup: [slot(0, "x"), slot(1, "y"), slot(2, "z"), hat(0, "q", "50", "1")],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: reg("100", "1") }),
    keys: K(ALL),
  },
  {
    name: "acquire refused, a later holder: no place",
    setup: [slot(0, "x"), slot(1, "y"), slot(2, "z"), hat(0, "x", "500", "1")],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: reg("100", "1") }),
    keys: K(ALL),
  },
  {
    name: "acquire consolidating (eligible 1): another slot free, refused",
    setup: [slot(1, "y")],
    script: SEM_ACQUIRE,
    args: acq([1, 0, 2], { eligible: 1, place: reg("100", "1") }),
    keys: K([1, 0, 2]),
  },
  {
    name: "acquire refused, a room of another type",
    setup: [slot(0, "x"), slot(1, "y"), slot(2, "z"), ["SET", "w", "user"]],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: reg("100", "1") }),
    keys: K(ALL),
  },
  {
    name: "acquire placed, a room of another type",
    setup: [["SET", "w", "user"]],
    script: SEM_ACQUIRE,
    args: acq(ALL, { place: reg("100", "1") }),
    keys: K(ALL),
  },
  // SEM_PASS.
  {
    name: "pass: an older look's slot freed and handed on, registered preferring the kept slot",
    setup: [slot(2, T), hat(2, T, "100", "1"), sq(A, "200", "1")],
    listen: ["w"],
    script: SEM_PASS,
    args: pass("0", "2"),
    keys: K(ALL),
  },
  {
    name: "pass: a newer look's slot kept, nothing registered",
    setup: [slot(1, T), hat(1, T, "100", "3")],
    script: SEM_PASS,
    args: pass("", "2"),
    keys: K(ALL),
  },
  {
    name: "pass: the kept slot is never touched",
    setup: [slot(0, T), hat(0, T, "100", "1")],
    script: SEM_PASS,
    args: pass("0", "2"),
    keys: K(ALL),
  },
  {
    name: "pass: on no slot, registered without a preference",
    setup: [slot(0, "x")],
    script: SEM_PASS,
    args: pass("", "2"),
    keys: K(ALL),
  },
  {
    name: "pass tombstoned",
    setup: [slot(1, T), tomb],
    script: SEM_PASS,
    args: pass("0", "2"),
    keys: K(ALL),
  },
  // RELEASE_SLOTS.
  {
    name: "release: its slot freed, nobody waits, tombstone written",
    setup: [slot(1, T), hat(1, T, "100", "0"), slot(0, "x")],
    script: RELEASE_SLOTS,
    args: end(),
    keys: K(ALL),
  },
  {
    name: "release: its slot handed to the first waiter",
    setup: [slot(0, "x"), slot(1, T), slot(2, "z"), hat(1, T, "100", "0"), sq(A, "200", "1")],
    listen: ["w"],
    script: RELEASE_SLOTS,
    args: end([2, 0, 1]),
    keys: K([2, 0, 1]),
  },
  {
    name: "release re-sent: the slot it handed on is recognised",
    setup: [slot(0, "x"), slot(1, A), slot(2, "z"), hat(1, A, "200", "1", T)],
    script: RELEASE_SLOTS,
    args: end(),
    keys: K(ALL),
  },
  {
    name: "release of a token held nowhere: 0, a free slot served",
    setup: [slot(0, "x"), slot(2, "z"), sq(A, "200", "1")],
    listen: ["w"],
    script: RELEASE_SLOTS,
    args: end(),
    keys: K(ALL),
  },
  {
    name: "release without a tombstone key",
    setup: [slot(0, T)],
    script: RELEASE_SLOTS,
    args: end(),
    keys: K(ALL, false),
  },
  // DISCARD_SLOTS.
  {
    name: "discard: the token's slot freed and handed on, its record gone",
    setup: [slot(0, T), slot(1, "y"), slot(2, "z"), sq(A, "200", "1")],
    listen: ["w"],
    script: DISCARD_SLOTS,
    args: end(),
    keys: K(ALL),
  },
  {
    name: "discard of a waiting call: record gone, tombstone written",
    setup: [slot(0, "x"), slot(1, "y"), slot(2, "z"), sq(T, "100", "2")],
    script: DISCARD_SLOTS,
    args: end(),
    keys: K(ALL),
  },
  {
    name: "trim: the permit's slot is not in the call and stays",
    setup: [slot(1, T), hat(1, T, "100", "1")],
    script: DISCARD_SLOTS,
    args: end([0, 2]),
    keys: K([0, 2]),
  },
  // SEM_INSPECT.
  {
    name: "inspect",
    setup: [slot(1, "y", "7000")],
    script: SEM_INSPECT,
    args: [],
    keys: K(ALL, false),
  },
];

let counter = 0;

describe("the semaphore's scripts: simulated node = redis-server", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", (_, c) =>
    compare(dev.direct(0), c, `ps:${counter++}:`),
  );
});
