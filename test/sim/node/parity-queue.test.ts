/**
 * ACQUIRE's queue branches (registration, the newest look, `ahead`, a free key handed to an earlier
 * waiter or dropped, P2's look raise, the tombstone): simulated node = redis-server.
 * The harness and what it compares: queue-parity.ts.
 */
import { describe, it } from "vitest";
import { ACQUIRE } from "../../../src/scripts";
import { useDevCluster } from "../../support/dev-cluster";
import { A, B, type Case, caret, compare, fence, hold, q, reg, T, TWO, tomb } from "./queue-parity";

const dev = useDevCluster({ nodes: 1 });

const CASES: readonly Case[] = [
  {
    name: "acquire held registers",
    setup: [hold("x")],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "1")],
  },
  {
    name: "acquire held, a newer look replaces the record",
    setup: [hold("x"), q(T, "100", "1")],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "2")],
  },
  {
    name: "acquire held, an older look keeps the record",
    setup: [hold("x"), q(T, "100", "3")],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "2")],
  },
  {
    name: "acquire held reports the holder's place",
    setup: [hold("x"), caret("x", "50", "1")],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "1")],
  },
  {
    name: "acquire held, ^ of another holder: no place",
    setup: [hold("x"), caret("y", "50", "1")],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "1")],
  },
  {
    name: "acquire held, a queue of another type",
    setup: [hold("x"), ["SET", "w", "user"]],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "1")],
  },
  {
    name: "acquire free hands to an earlier waiter",
    setup: [q(A, "50", "2")],
    listen: ["w"],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "1")],
  },
  {
    name: "acquire free, fenced hand-off",
    setup: [fence(4), q(A, "50", "2", { fencing: "1" })],
    listen: ["w"],
    script: ACQUIRE,
    args: [T, "5000", "1", "100"],
  },
  {
    name: "acquire free, nobody listens for the earlier waiter",
    setup: [q(A, "50", "2")],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "1")],
  },
  {
    name: "acquire free, the earlier waiter's wait ended",
    setup: [q(A, "50", "2", { deadline: "$past" })],
    listen: ["w"],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "1")],
  },
  {
    name: "acquire free, a later waiter waits",
    setup: [q(A, "900", "2")],
    listen: ["w"],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "1")],
  },
  {
    name: "acquire free without a place serves the queue",
    setup: [q(A, "900", "2")],
    listen: ["w"],
    script: ACQUIRE,
    args: [T, "5000", "0"],
  },
  {
    name: "acquire free, a tie broken by token",
    setup: [q(A, "100", "2"), q("zzzz", "100", "1")],
    listen: ["w"],
    script: ACQUIRE,
    args: [B, "5000", "0", "100"],
  },
  {
    name: "acquire finds its token, a newer look raises ^",
    setup: [hold(T), caret(T, "100", "1")],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "3")],
  },
  {
    name: "acquire finds its token, an older look leaves ^",
    setup: [hold(T), caret(T, "100", "4")],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "3")],
  },
  {
    name: "acquire tombstoned registers nothing",
    setup: [hold("x"), tomb],
    script: ACQUIRE,
    args: [T, "5000", "0", ...reg("100", "1")],
  },
  {
    name: "two keys: the second held, registers in both queues, sets nothing",
    setup: [hold("x", "9000", "k2")],
    script: ACQUIRE,
    args: [T, "5000", "1", ...reg("100", "1")],
    keys: TWO,
  },
  {
    name: "two keys: the first free with an earlier waiter, handed to it, nothing placed",
    setup: [q(A, "50", "1")],
    listen: ["w"],
    script: ACQUIRE,
    args: [T, "5000", "0", "100"],
    keys: TWO,
  },
];

let counter = 0;

describe("ACQUIRE and the queue: simulated node = redis-server", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", (_, c) =>
    compare(dev.direct(0), c, `pq:a${counter++}:`),
  );
});
