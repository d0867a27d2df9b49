/**
 * The queue served by RELEASE, HANDOVER, DISCARD, PASS and LEAVE (hand-offs, `before`, re-sends
 * recognising the waiter handed to, the look fence, a queue key of another type), and the
 * holder record EXTEND raises: simulated node =
 * redis-server.
 * The harness and what it compares: queue-parity.ts.
 */
import { describe, it } from "vitest";
import { DISCARD, EXTEND, HANDOVER, LEAVE, PASS, RELEASE } from "../../../src/scripts";
import { useDevCluster } from "../../support/dev-cluster";
import {
  A,
  B,
  C,
  type Case,
  caret,
  compare,
  D,
  fence,
  hold,
  ONE,
  q,
  reg,
  T,
  TWO,
  tomb,
} from "./queue-parity";

const dev = useDevCluster({ nodes: 1 });

const CASES: readonly Case[] = [
  {
    name: "release hands to the first live, heard waiter",
    setup: [
      hold(T),
      q(A, "300", "1"),
      q(B, "100", "1", { listener: "nobody" }),
      q(C, "200", "1", { deadline: "$past" }),
      q(D, "400", "1"),
    ],
    listen: ["w"],
    script: RELEASE,
    args: [T],
    keys: ONE,
  },
  {
    name: "release with before, a later waiter stays",
    setup: [hold(T), q(A, "300", "1")],
    listen: ["w"],
    script: RELEASE,
    args: [T, "200"],
    keys: ONE,
  },
  {
    name: "release with before, an earlier waiter is served",
    setup: [hold(T), q(A, "300", "1")],
    listen: ["w"],
    script: RELEASE,
    args: [T, "400"],
    keys: ONE,
  },
  {
    name: "release removes its own record",
    setup: [hold(T), q(T, "100", "1")],
    script: RELEASE,
    args: [T],
    keys: ONE,
  },
  {
    name: "release re-sent recognises the waiter it handed to",
    setup: [hold(A, "1500"), caret(A, "300", "1", T)],
    script: RELEASE,
    args: [T],
    keys: ONE,
  },
  {
    name: "release of another's hand-off is refused",
    setup: [hold(A, "1500"), caret(A, "300", "1", "x")],
    script: RELEASE,
    args: [T],
    keys: ONE,
  },
  {
    name: "release of an absent key serves the queue",
    setup: [q(A, "300", "1")],
    listen: ["w"],
    script: RELEASE,
    args: [T],
    keys: ONE,
  },
  {
    name: "two keys: release serves each queue",
    setup: [hold(T), hold(T, "9000", "k2"), q(A, "100", "1"), q(B, "100", "1", { queue: "w2" })],
    listen: ["w", "w2"],
    script: RELEASE,
    args: [T],
    keys: TWO,
  },
  {
    name: "handover to the next local caller",
    setup: [hold(T), fence(7), q(A, "300", "1")],
    script: HANDOVER,
    args: [T, "n", "5000", "1", "200"],
  },
  {
    name: "handover to an earlier waiter of another instance",
    setup: [hold(T), fence(7), q(A, "100", "1", { fencing: "1" })],
    listen: ["w"],
    script: HANDOVER,
    args: [T, "n", "5000", "1", "300"],
  },
  {
    name: "handover re-sent after a hand-off to an earlier waiter",
    setup: [hold(A, "1500"), caret(A, "100", "1", T)],
    script: HANDOVER,
    args: [T, "n", "5000", "1", "300"],
  },
  {
    name: "handover re-sent after the grant",
    setup: [hold("n", "1000"), fence(8)],
    script: HANDOVER,
    args: [T, "n", "5000", "1", "300"],
  },
  {
    name: "handover, the next caller tombstoned",
    setup: [hold(T), tomb, q(A, "300", "1")],
    listen: ["w"],
    script: HANDOVER,
    args: [T, "n", "5000", "0", "200"],
  },
  { name: "handover absent, no place", script: HANDOVER, args: [T, "n", "5000", "0", ""] },
  {
    name: "two keys: handover, an earlier waiter on one key",
    setup: [hold(T), hold(T, "9000", "k2"), q(A, "100", "1")],
    listen: ["w"],
    script: HANDOVER,
    args: [T, "n", "5000", "0", "300"],
    keys: [...TWO, "v"],
  },
  {
    name: "discard takes back a hand-off and serves the next",
    setup: [hold(T, "1500"), q(A, "300", "1"), q(T, "100", "1")],
    listen: ["w"],
    script: DISCARD,
    args: [T, "5000"],
  },
  {
    name: "leave by token",
    setup: [q(T, "100", "1"), q(A, "200", "1")],
    script: LEAVE,
    args: [T],
    keys: ONE,
  },
  {
    name: "leave keeps a holder's token and ^",
    setup: [hold(T), caret(T, "100", "1")],
    script: LEAVE,
    args: [T],
    keys: ONE,
  },
  {
    name: "leave, a queue of another type",
    setup: [["SET", "w", "user"]],
    script: LEAVE,
    args: [T],
    keys: ONE,
  },
  {
    name: "pass kept: a look at or after it placed the token",
    setup: [hold(T), caret(T, "100", "3")],
    script: PASS,
    args: [T, ...reg("100", "2")],
  },
  {
    name: "pass hands on to an earlier waiter and registers again",
    setup: [hold(T), caret(T, "100", "1"), q(A, "50", "1"), q(B, "200", "1")],
    listen: ["w"],
    script: PASS,
    args: [T, ...reg("100", "2")],
  },
  {
    name: "pass kept: only later waiters",
    setup: [hold(T), caret(T, "100", "1"), q(A, "200", "1")],
    listen: ["w"],
    script: PASS,
    args: [T, ...reg("100", "2")],
  },
  {
    name: "pass, no waiter: the key stays free",
    setup: [hold(T), caret(T, "100", "1")],
    script: PASS,
    args: [T, ...reg("100", "2")],
  },
  {
    name: "pass, held by another: registers",
    setup: [hold("x")],
    script: PASS,
    args: [T, ...reg("100", "2")],
  },
  {
    name: "pass kept: an extension counted the token",
    setup: [hold(T), caret(T, "100", "100000000000000")],
    script: PASS,
    args: [T, ...reg("100", "2")],
  },
  {
    name: "pass kept: no holder record",
    setup: [hold(T), q(A, "200", "1")],
    listen: ["w"],
    script: PASS,
    args: [T, ...reg("100", "2")],
  },
  {
    name: "pass kept: the record names another holder",
    setup: [hold(T), caret(A, "50", "1")],
    script: PASS,
    args: [T, ...reg("100", "2")],
  },
  {
    name: "extend raises its holder record past every pass",
    setup: [hold(T, "1000"), caret(T, "100", "3", "x")],
    script: EXTEND,
    args: [T, "5000"],
  },
  {
    name: "extend leaves another holder's record",
    setup: [hold(T, "1000"), caret(A, "100", "3")],
    script: EXTEND,
    args: [T, "5000"],
  },
  {
    name: "pass after the cleanup does nothing",
    setup: [hold(T), tomb],
    script: PASS,
    args: [T, ...reg("100", "2")],
  },
];

let counter = 0;

describe("RELEASE, HANDOVER, DISCARD, LEAVE, PASS and the queue: simulated node = redis-server", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", (_, c) =>
    compare(dev.direct(0), c, `pq:s${counter++}:`),
  );
});
