/**
 * The defects fixed in the scripts and the client, and the guarantees that need a particular
 * interleaving (Idempotency-Key, tickets, locks on several keys, one-shot counters, late rounds),
 * as named, replayable schedules (docs/SAFETY.md §7 lists which claim each one checks). Each passes with the fixes; with the
 * fix undone in the nodes' Lua (`mutant`, see `mutants.ts`) the simulation finds the bug named in
 * `finds`. Found by searching fate seeds for the defect's interleaving (`npm run sim -- --mutant`).
 *
 * @module
 */

import type { AnyMutantName } from "./mutants";
import { SEMAPHORE_REGRESSIONS } from "./semaphore-regressions";
import type { CallerSpec, OpSpec, ScheduleSpec } from "./workload/spec";

/** A named regression schedule. */
export interface Regression {
  readonly spec: ScheduleSpec;
  /** The mutant that brings the defect back, and the property the simulation then breaks. */
  readonly mutant?: AnyMutantName | undefined;
  readonly finds?: string | undefined;
}

const acquire = (lease: number, wait: number, hold: number, extra: Partial<OpSpec> = {}): OpSpec =>
  ({
    kind: "acquire",
    key: 0,
    wait,
    lease,
    hold,
    autoExtend: false,
    end: "release",
    ...extra,
  }) as OpSpec;

/** A lock on several keys, released after `hold` ms. */
const multi = (keys: number[], wait: number, lease: number, hold: number): OpSpec => ({
  kind: "multi",
  keys,
  wait,
  lease,
  hold,
  autoExtend: false,
});

const caller = (start: number, ...ops: OpSpec[]): CallerSpec => ({ start, ops });

/** A request with `Idempotency-Key` "k0" and body `body` whose handler takes `hold` ms. */
const idempotent = (body: number, hold: number): OpSpec => ({
  kind: "idempotent",
  key: 0,
  body,
  lease: 1_000,
  hold,
  fail: false,
  wait: 0,
});

/** A request with `Idempotency-Key` "k0" (body 0) with a claim of `lease` ms held `hold` ms. */
const idempotentFor = (lease: number, hold: number): OpSpec => ({
  kind: "idempotent",
  key: 0,
  body: 0,
  lease,
  hold,
  fail: false,
  wait: 0,
});

const pause = (ms: number): OpSpec => ({ kind: "pause", ms });

/** A caller that keeps re-acquiring a lock on keys 0 and 1 with short holds (it does not queue). */
const busyLocalMulti = (start: number): CallerSpec =>
  caller(start, ...Array.from({ length: 6 }, () => multi([0, 1], 4_000, 1_000, 20)));

/**
 * A pass overtaken by a later look of the same call (see `q4-late-pass-after-find`): the
 * constructed delays pin a split, the pass's late request to node 0 and node 2's silence.
 */
const LATE_PASS: ScheduleSpec = {
  seed: 31,
  nodes: 3,
  weather: "calm",
  restarts: "none",
  fencing: false,
  keys: 1,
  late: [
    // Node 2 is out until C's look 4: everything sent to it before runs 20 s late.
    { node: 2, from: 0, to: 1_100, by: 20_000 },
    // A's first queued look to node 0: not registered there when H's release serves node 0.
    { node: 0, from: 265, to: 295, by: 300 },
    // C's pass to node 0: runs after C's look 4 there (the client gave up on it at 250 ms).
    { node: 0, from: 670, to: 690, by: 600 },
  ],
  instances: [
    { wake: false, rate: 1, callers: [caller(0, acquire(1_500, 0, 400))] },
    { wake: false, rate: 1, callers: [caller(20, acquire(1_500, 3_000, 500))] },
    { wake: false, rate: 1, callers: [caller(60, acquire(1_500, 3_000, 500))] },
  ],
};

/**
 * A split between two callers placed in the same ms (see `q6-tie-split`): a late registration
 * and a late release pin it on all three nodes.
 */
const TIE: ScheduleSpec = {
  seed: 31,
  nodes: 3,
  weather: "calm",
  restarts: "none",
  fencing: false,
  keys: 1,
  late: [
    // A's first two queued looks to node 0: not registered there when H's release serves it.
    { node: 0, from: 25, to: 30, by: 500 },
    { node: 0, from: 225, to: 240, by: 300 },
    // H's release to node 2 runs 20 s late: its token stays there (lease 10 s) for the waits.
    { node: 2, from: 400, to: 410, by: 20_000 },
  ],
  instances: [
    { wake: false, rate: 1, callers: [caller(0, acquire(10_000, 0, 400))] },
    { wake: false, rate: 1, callers: [caller(20, acquire(1_500, 3_000, 500))] },
    // Placed in A's ms: instance 2's clock is 28 ms behind instance 1's (seed 31).
    { wake: false, rate: 1, callers: [caller(48, acquire(1_500, 3_000, 500))] },
  ],
};

export const REGRESSIONS = {
  /**
   * a: the holder's `extend(200)` on a 1.5 s lease times out on a majority but runs there late;
   * undone, EXTEND shortens those nodes to 200 ms while the holder keeps its validity, and the
   * waiter of the other instance gets the key ~450 ms before it ends (overlap).
   */
  "a-failed-extend": {
    spec: {
      seed: 3,
      nodes: 3,
      weather: "harsh",
      restarts: "none",
      fencing: false,
      keys: 1,
      instances: [
        { wake: false, rate: 1, callers: [caller(0, acquire(1_500, 0, 1_400, { extend: 200 }))] },
        { wake: false, rate: 1, callers: [caller(100, acquire(500, 2_000, 50))] },
      ],
    },
    mutant: "a-extend-shortens",
    finds: "overlap",
  },
  /**
   * b: counters 10/1/1; Y's look is granted on C, errs on A and is delayed to B; X is granted on
   * A (11) and B (2), and its raise fails on B. Undone, the raise counts C (Y's) and X gets fence
   * 11; Y's delayed request then lands on B and Y holds B and C with fence 3 (fence order).
   */
  "b-fence-raise": {
    spec: {
      seed: 658,
      nodes: 3,
      weather: "harsh",
      restarts: "none",
      fencing: true,
      keys: 1,
      counters: [10, 1, 1, 0, 0],
      instances: [
        { wake: false, rate: 1, callers: [caller(0, acquire(900, 0, 60))] },
        {
          wake: false,
          rate: 1,
          callers: [caller(3, acquire(900, 0, 0)), caller(60, acquire(900, 0, 0))],
        },
      ],
    },
    mutant: "b-raise-counts-everywhere",
    finds: "fence-order",
  },
  /**
   * c: three callers of one instance keep re-acquiring a lock on keys 0 and 1 (20 ms holds: a lock
   * on several keys does not queue, so its line hands over) while one caller of another instance
   * waits for key 0 in the queue. Each hand-over serves that waiter first when it was placed
   * before the next local caller. Undone, the local callers hand the key on among themselves
   * (up to `HANDOVER_RUN_MAX`) past the waiter, placed before them ("queue-order").
   */
  "c-handover-starvation": {
    spec: {
      seed: 7,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 2,
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [busyLocalMulti(0), busyLocalMulti(1), busyLocalMulti(2)],
        },
        { wake: false, rate: 1.004, callers: [caller(30, acquire(1_000, 4_000, 20))] },
      ],
    },
    mutant: "c-handover-ignores-room",
    finds: "queue-order",
  },
  /**
   * d: a release that wakes the waiter of another instance loses its reply after it ran and is
   * re-sent. Both halves of the fix must be undone to see `expired` (the re-send's reply, and the
   * client's inference from a release sent while valid): the client half cannot be a Lua mutant,
   * so this schedule checks the fixed behaviour only (see docs/SAFETY.md §7).
   */
  "d-resent-release": {
    spec: {
      seed: 26,
      nodes: 1,
      weather: "harsh",
      restarts: "none",
      fencing: false,
      keys: 1,
      instances: [
        { wake: true, rate: 1, callers: [caller(0, acquire(900, 0, 200))] },
        { wake: true, rate: 1, callers: [caller(20, acquire(900, 3_000, 10))] },
      ],
    },
  },
  /**
   * e (docs/SAFETY.md §6b I1): a request with an Idempotency-Key runs and keeps its response; a retry with the
   * same body is replayed, one with another body gets 422, and two more retries race for the
   * claim. Undone (a done marker read as held, and granted over), the first retry runs the handler
   * a second time after a kept response.
   */
  "e-idempotent-retry": {
    spec: {
      seed: 12,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      instances: [
        // The plain acquire afterwards: lock keys and idempotency keys never meet.
        { wake: false, rate: 1, callers: [caller(0, idempotent(0, 200), acquire(500, 0, 10))] },
        {
          wake: false,
          rate: 1,
          callers: [
            caller(600, idempotent(0, 0), idempotent(1, 0)),
            caller(650, idempotent(0, 0)),
            caller(650, idempotent(0, 0)),
          ],
        },
      ],
    },
    mutant: "e-done-ignored",
    finds: "idempotent-once",
  },
  /**
   * a (docs/SAFETY.md §6b I1): a request with an Idempotency-Key runs (lease 400 ms) while requests fail
   * (harsh weather), and another instance retries it three times after the lease. Its record
   * write did not reach a majority in one round; before the fix the run ended "not stored", the
   * claim ran out with its lease, and a retry (whose lookup missed the one node with the record)
   * ran the handler again without anyone being told (idempotent-once). Now the write is re-sent
   * while the claim is valid. The fix is in the client (no mutant): undone by hand, this schedule
   * fails.
   */
  "a-idempotent-record-write": {
    spec: {
      seed: 135,
      nodes: 3,
      weather: "harsh",
      restarts: "none",
      fencing: false,
      keys: 1,
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [caller(0, idempotentFor(400, 100), acquire(500, 3_000, 10))],
        },
        {
          wake: false,
          rate: 1,
          callers: [
            caller(
              700,
              idempotentFor(400, 0),
              pause(300),
              idempotentFor(400, 0),
              pause(600),
              idempotentFor(400, 0),
            ),
          ],
        },
      ],
    },
  },
  /** a (docs/SAFETY.md §6b I1) on one node: its record write fails once (harsh weather); the same story. */
  "a-idempotent-record-write-one-node": {
    spec: {
      seed: 53,
      nodes: 1,
      weather: "harsh",
      restarts: "none",
      fencing: false,
      keys: 1,
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [caller(0, idempotentFor(400, 100), acquire(500, 3_000, 10))],
        },
        {
          wake: false,
          rate: 1,
          callers: [
            caller(
              700,
              idempotentFor(400, 0),
              pause(300),
              idempotentFor(400, 0),
              pause(600),
              idempotentFor(400, 0),
            ),
          ],
        },
      ],
    },
  },
  /**
   * f (docs/SAFETY.md §4 Theorem 3): a lock handed on with a ticket that a queue delivers twice, at once, to two
   * other instances: exactly one resumes it. Undone (the ticket's token extended rather than
   * swapped), both resume and their sections overlap.
   */
  "f-ticket-delivered-twice": {
    spec: {
      seed: 15,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            caller(0, {
              kind: "handoff",
              key: 0,
              wait: 0,
              lease: 1_000,
              hold: 50,
              ticketLease: 1_500,
              deliveries: 2,
              to: 1,
              delay: 100,
            }),
          ],
        },
        { wake: false, rate: 1, callers: [caller(400, acquire(500, 0, 10))] },
        { wake: false, rate: 1, callers: [caller(2_500, acquire(500, 0, 10))] },
      ],
    },
    mutant: "f-resume-reusable",
    finds: "overlap",
  },
  /**
   * g (docs/SAFETY.md §4b M1): a lock on keys 0 and 1 while another instance holds key 1 alone is refused
   * on every node. Undone (ACQUIRE looks at the first key of the set only), it is granted over
   * the holder of key 1 (overlap on k1).
   */
  "g-multi-all-or-none": {
    spec: {
      seed: 16,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 2,
      instances: [
        { wake: false, rate: 1, callers: [caller(0, acquire(1_500, 0, 1_000, { key: 1 }))] },
        { wake: false, rate: 1, callers: [caller(200, multi([1, 0], 0, 1_000, 300))] },
      ],
    },
    mutant: "g-multi-first-key-only",
    finds: "overlap",
  },
  /**
   * h (docs/SAFETY.md §4b M4): key 0's counter runs ahead (three grants), then a lock on keys 0 and 1 takes
   * a fence above both counters and stores it on both; a later lock on key 1 alone goes higher.
   * Undone (the fence stored on the first key's counter only), key 1's next fence is lower than
   * the one the lock on both keys used (fence order on k1). One node: on several, the fence raise
   * that follows every fenced grant stores the fence on every key's counter too.
   */
  "h-multi-fence-on-every-key": {
    spec: {
      seed: 17,
      nodes: 1,
      weather: "calm",
      restarts: "none",
      fencing: true,
      keys: 2,
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            caller(
              0,
              acquire(500, 0, 10),
              acquire(500, 0, 10),
              acquire(500, 0, 10),
              multi([1, 0], 0, 500, 10),
              acquire(500, 0, 10, { key: 1 }),
            ),
          ],
        },
      ],
    },
    mutant: "h-multi-fence-first-counter",
    finds: "fence-order",
  },
  /**
   * i: one caller keeps re-acquiring with nobody of its instance waiting, while a caller of
   * another instance waits (queued: every node streams). Every release hands the key to the
   * queue's first waiter, so the waiter gets the key after at most one more grant (fairness).
   * Its mutant (listeners served only by releases with local waiters) is retired: there are no
   * listeners and pollers any more, every release serves the queue (docs/SAFETY.md §7).
   */
  "i-listener-vs-recaller": {
    spec: {
      seed: 18,
      nodes: 1,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [caller(0, ...Array.from({ length: 14 }, () => acquire(1_000, 2_000, 100)))],
        },
        { wake: true, rate: 1, callers: [caller(150, acquire(1_000, 3_000, 20))] },
      ],
    },
  },
  /**
   * j (docs/SAFETY.md §5 J1): with fencing, two triggers of one occurrence (`once()`), one of whose jobs tries
   * to hand its lock on, two jobs on one schedule, and an Idempotency-Key request. Undone, COMPLETE leaves each key's fence
   * counter without expiry beside its done marker: one counter per occurrence and request, for
   * ever (property "counter-expiry").
   */
  "j-one-shot-counter-expires": {
    spec: {
      seed: 22,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: true,
      keys: 1,
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            caller(0, { kind: "onceTicket", wrapper: "once", key: 0, hold: 50 }),
            caller(10, { kind: "scheduled", job: 0, time: 0, hold: 20 }),
            // A plain fenced lock beside them: its counter keeps no expiry (exempt).
            caller(60, acquire(1_000, 0, 50)),
          ],
        },
        {
          wake: true,
          rate: 1,
          callers: [
            caller(5, { kind: "scheduled", job: 1, time: 0, hold: 20 }),
            caller(30, idempotent(0, 40)),
          ],
        },
      ],
    },
    mutant: "j-counter-never-expires",
    finds: "counter-expiry",
  },
  /**
   * j, second half (found by the one-shot workload): `once()` with fencing in faulty weather; the
   * grant's fence raise reaches one node only after COMPLETE wrote the marker there. Undone, that
   * raise creates the counter without expiry beside the marker.
   */
  "j-late-raise-beside-marker": {
    spec: {
      seed: 981_176_557,
      nodes: 3,
      weather: "faulty",
      restarts: "none",
      fencing: true,
      keys: 1,
      instances: [
        {
          wake: false,
          rate: 0.99,
          callers: [
            caller(0, { kind: "onceTicket", wrapper: "once", key: 0, hold: 0 }, acquire(150, 0, 0)),
          ],
        },
      ],
    },
    mutant: "j-late-raise-lasting-counter",
    finds: "counter-expiry",
  },
  /**
   * g22 (docs/SAFETY.md L3): an acquire on 3 nodes whose requests to nodes 1 and 2 arrive 1.2 s late (the
   * request timeout is 250 ms) fails; its cleanup lands on those nodes first, then the late
   * ACQUIREs run. Another instance's caller comes at 1.4 s. Undone (ACQUIRE ignores the failed
   * round's tombstone), the late requests place the token on a majority, held by nobody for the
   * rest of its lease (blocked-by-nobody), and the other caller is refused.
   */
  "g22-late-acquire-round": {
    spec: {
      seed: 22,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      late: [
        { node: 1, from: 0, to: 5, by: 1_200 },
        { node: 2, from: 0, to: 5, by: 1_200 },
      ],
      instances: [
        { wake: false, rate: 1, callers: [caller(0, acquire(1_500, 0, 10))] },
        { wake: false, rate: 1, callers: [caller(1_400, acquire(1_500, 0, 10))] },
      ],
    },
    mutant: "g22-late-acquire-places",
    finds: "blocked-by-nobody",
  },
  /**
   * h22 (docs/SAFETY.md L3, Theorem 3): a ticket handed on (lease 3 s) whose resume sends its requests to nodes 1 and
   * 2 while they are 1.2 s late fails with QuorumError; its undo puts the ticket's token back on
   * node 0 and tombstones the fresh token on nodes 1 and 2 before the late RESUMEs run there. The
   * queue redelivers the message 1.5 s later: it resumes. Undone (RESUME ignores the tombstone),
   * the late RESUMEs swap the ticket's token away on a majority (blocked-by-nobody), and the
   * redelivery gets LockLostError.
   */
  "h22-late-resume-round": {
    spec: {
      seed: 23,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      late: [
        { node: 1, from: 120, to: 300, by: 1_200 },
        { node: 2, from: 120, to: 300, by: 1_200 },
      ],
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            caller(0, {
              kind: "handoff",
              key: 0,
              wait: 0,
              lease: 1_000,
              hold: 50,
              ticketLease: 3_000,
              deliveries: 1,
              to: 1,
              delay: 100,
              redeliver: 1_500,
            }),
          ],
        },
        { wake: false, rate: 1, callers: [] },
      ],
    },
    mutant: "h22-late-resume-swaps",
    finds: "blocked-by-nobody",
  },
  /**
   * g22 (docs/SAFETY.md L3), hand-overs: a release hands the key to the next caller of its instance, and the
   * HANDOVER requests to nodes 1 and 2 arrive 1.2 s late; the next caller's round fails and is
   * cleaned up before they run. Undone (HANDOVER ignores the tombstone), they place the next
   * caller's dead token on a majority (blocked-by-nobody). The next caller gives up (700 ms)
   * before they run: while it waits in the queue, a late HANDOVER hands the key to it instead.
   */
  "g22-late-handover": {
    spec: {
      seed: 24,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      late: [
        { node: 1, from: 150, to: 260, by: 1_200 },
        { node: 2, from: 150, to: 260, by: 1_200 },
      ],
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [caller(0, acquire(1_500, 0, 200)), caller(50, acquire(1_500, 700, 10))],
        },
      ],
    },
    mutant: "g22-late-handover-places",
    finds: "blocked-by-nobody",
  },
  /**
   * k22 (docs/SAFETY.md L3): as h22, but the lock's lease (3 s) outlasts the ticket's (0.5 s): the resume
   * round's TTL is 0.5 s while the nodes keep ~3 s, and the RESUMEs to nodes 1 and 2 run 1.2 s
   * late — after a tombstone kept for the round's TTL would have expired. The undo's tombstone
   * outlives the ticket's token there, so they swap nothing and the redelivery resumes. Undone
   * (the tombstone kept for the round's TTL only), the late RESUMEs swap the ticket's token away
   * on a majority after their undo ran there (blocked-by-nobody).
   */
  "k22-late-resume-past-round-ttl": {
    spec: {
      seed: 25,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      late: [
        { node: 1, from: 120, to: 300, by: 1_200 },
        { node: 2, from: 120, to: 300, by: 1_200 },
      ],
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            caller(0, {
              kind: "handoff",
              key: 0,
              wait: 0,
              lease: 3_000,
              hold: 50,
              ticketLease: 500,
              deliveries: 1,
              to: 1,
              delay: 100,
              redeliver: 1_500,
            }),
          ],
        },
        { wake: false, rate: 1, callers: [] },
      ],
    },
    mutant: "k22-undo-tombstone-round-ttl",
    finds: "blocked-by-nobody",
  },
  /**
   * m22 (docs/SAFETY.md §4 Theorem 3): as h22, but the undo is slower than the late RESUME: the RESUMEs to nodes 1 and
   * 2 run 1 s late, the undo's DISCARDs there 3 s late. The redelivery 1.5 s after the failure
   * finds nodes 1 and 2 holding the failed resume's own token: it must get QuorumError (and be
   * redelivered), not LockLostError "resumed already" — once the undo landed, a redelivery
   * resumes (two grants: the sender's and the resume; `sim.test.ts` checks them).
   */
  "m22-redelivery-during-slow-undo": {
    spec: {
      seed: 26,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      late: [
        { node: 1, from: 120, to: 300, by: 1_000 },
        { node: 2, from: 120, to: 300, by: 1_000 },
        { node: 1, from: 300, to: 800, by: 3_000 },
        { node: 2, from: 300, to: 800, by: 3_000 },
      ],
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            caller(0, {
              kind: "handoff",
              key: 0,
              wait: 0,
              lease: 1_000,
              hold: 50,
              ticketLease: 10_000,
              deliveries: 1,
              to: 1,
              delay: 100,
              redeliver: 1_500,
            }),
          ],
        },
        { wake: false, rate: 1, callers: [] },
      ],
    },
  },
  /**
   * q1 (docs/SAFETY.md §2 P3): a waiter of a lock on one key (a multi with one key: it queues)
   * is handed the key; found by the campaign (`npm run sim -- --seed 7 --mutant
   * q1-gap-overstated`) and shrunk. Undone (the gap overstated by 50 ms), the waiter counts the
   * hand-off's token 50 ms longer than the nodes keep it, and the next caller's grant overlaps.
   */
  "q1-gap-overstated": {
    spec: {
      seed: 0,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 2,
      nodeRates: [1, 1, 1, 1, 1],
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            {
              start: 0,
              ops: [
                {
                  kind: "handoff",
                  key: 0,
                  wait: 0,
                  lease: 150,
                  hold: 0,
                  ticketLease: 150,
                  deliveries: 1,
                  to: 0,
                  delay: 0,
                },
              ],
            },
            {
              start: 1,
              ops: [
                { kind: "multi", keys: [0], wait: 1034, lease: 150, hold: 0, autoExtend: false },
              ],
            },
          ],
        },
        {
          wake: false,
          rate: 1,
          callers: [
            {
              start: 1,
              ops: [
                { kind: "multi", keys: [0], wait: 50, lease: 1044, hold: 1019, autoExtend: false },
                { kind: "using", key: 0, wait: 0, hold: 0 },
              ],
            },
            {
              start: 0,
              ops: [
                { kind: "multi", keys: [1], wait: 0, lease: 150, hold: 13, autoExtend: false },
                { kind: "idempotent", key: 0, body: 0, lease: 150, hold: 0, fail: false, wait: 50 },
              ],
            },
          ],
        },
      ],
    } as ScheduleSpec,
    mutant: "q1-gap-overstated",
    finds: "overlap",
  },
  /**
   * q5 (docs/SAFETY.md §2 DISCARD, L3): a caller aborts its wait (116 ms) for a key held by a
   * ticket's lock while another call of its instance keeps the instance's channel open; found by
   * the campaign (`npm run sim -- --seed 7 --mutant q5-discard-keeps-record`) and shrunk. Undone
   * (DISCARD keeps the call's queue record), the release after the cleanup hands the key to the
   * ended call on a majority: held by nobody (blocked-by-nobody).
   */
  "q5-discard-keeps-record": {
    spec: {
      seed: 0,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 2,
      nodeRates: [1, 1, 1, 1, 1],
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            {
              start: 0,
              ops: [
                {
                  kind: "idempotent",
                  key: 0,
                  body: 0,
                  lease: 150,
                  hold: 0,
                  fail: false,
                  wait: 50,
                  retries: 1,
                  gap: 50,
                },
                {
                  kind: "handoff",
                  key: 1,
                  wait: 0,
                  lease: 150,
                  hold: 0,
                  ticketLease: 150,
                  deliveries: 1,
                  to: 0,
                  delay: 106,
                },
                { kind: "idempotent", key: 0, body: 0, lease: 150, hold: 0, fail: false, wait: 0 },
              ],
            },
            {
              start: 0,
              ops: [
                {
                  kind: "acquire",
                  key: 0,
                  wait: 0,
                  lease: 150,
                  hold: 56,
                  autoExtend: false,
                  end: "release",
                },
                {
                  kind: "acquire",
                  key: 1,
                  wait: 121,
                  lease: 150,
                  hold: 0,
                  autoExtend: false,
                  end: "release",
                  abortAfter: 116,
                },
                {
                  kind: "acquire",
                  key: 0,
                  wait: 50,
                  lease: 150,
                  hold: 1,
                  autoExtend: false,
                  end: "release",
                },
              ],
            },
          ],
        },
      ],
    } as ScheduleSpec,
    mutant: "q5-discard-keeps-record",
    finds: "blocked-by-nobody",
  },
  /**
   * q4 (docs/SAFETY.md §2 ACQUIRE, P2, P4), constructed: a late pass overtaken by a later look
   * that finds the token. H (instance 0) holds nodes 0 and 1 (node 2 is silent until 1.1 s:
   * every request sent to it before then runs 20 s late); A (instance 1, placed first) and C
   * (instance 2) queue. A's first look to node 0 runs 300 ms late, so H's release (~405 ms)
   * hands node 0 to C and node 1 to A: a split. C, behind A, passes (look 3, ~680 ms); the pass
   * to node 0 runs 600 ms late (~1280 ms), after the client gave up on it. C's look 4 (~1130 ms)
   * finds its token on node 0 (raising `^` to look 4) and places it on node 2, now answering:
   * C is granted {0, 2}. The late pass then finds `^` at look 4 ≥ 3 and keeps the token. Undone
   * (a look that finds its token leaves `^` at look 1, from the hand-off), the pass deletes C's
   * token and hands node 0 to A (registered there by its refused looks): A is granted {0, 1}
   * while C holds (overlap).
   */
  "q4-late-pass-after-find": {
    spec: LATE_PASS,
    mutant: "q4-found-look-not-raised",
    finds: "overlap",
  },
  /**
   * q3 (docs/SAFETY.md §2 PASS, P4): the schedule of `q4-late-pass-after-find`. Undone (PASS
   * deletes the token whatever look is recorded in `^`), the late pass removes the token that
   * C's look 4, sent after the pass, found there and C counted: A is granted over it (overlap).
   */
  "q3-late-pass-after-look": { spec: LATE_PASS, mutant: "q3-pass-ignores-look", finds: "overlap" },
  /**
   * q6 (docs/SAFETY.md §2 P4, §6 "The queue"), constructed: A (instance 1) and C (instance 2) are
   * placed in the same ms; H (instance 0) holds. A's first two queued looks reach node 0 late, so
   * H's release (~405 ms) hands node 0 to C and node 1 to A; its release to node 2 runs 20 s late,
   * so H's token (lease 10 s) stays there: a split, each waiter refused by the other and by H.
   * A comes first in the queue's order (same place, smaller token): C's look is told A's place,
   * C passes, A is granted, then C. Undone (a holder's place told only when placed strictly
   * before, as the client compared places), neither is told, neither passes, and A gives up at
   * the end of its 3 s wait with no grant of the key since H's release ("liveness").
   */
  "q6-tie-split": { spec: TIE, mutant: "q6-tie-by-place-alone", finds: "liveness" },
  /**
   * q7 (docs/SAFETY.md §2 RELEASE, §6 "The queue"), constructed: two callers of instance 1 start
   * in the same ms (one place) while H (instance 0) holds; both are refused and both wait in the
   * nodes' queue. H's release hands the key to F (the smaller token); F's grant (a queued call's:
   * released to the nodes, with `before` = the other's place) is released ~10 ms after S's
   * refresh, and serves S at once. Undone (only waiters placed strictly before `before` served),
   * the key stays free until S's next refresh (`retryDelayMax`, 200 ms), and S's wait (790 ms)
   * ends ~170 ms into that gap: S gives up with the key free on every node ("queue-idle").
   */
  "q7-release-same-ms": {
    spec: {
      seed: 32,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      instances: [
        { wake: false, rate: 1, callers: [caller(0, acquire(1_500, 0, 400))] },
        {
          wake: false,
          rate: 1,
          callers: [caller(20, acquire(1_500, 790, 10)), caller(20, acquire(1_500, 3_000, 230))],
        },
      ],
    },
    mutant: "q7-release-before-strict",
    finds: "queue-idle",
  },
  /**
   * r43 (docs/SAFETY.md §2 RELEASE, L3): found by the campaign (`npm run sim -- --schedules 20000
   * --seed 20261143`, schedule 2107) and shrunk. 5 nodes, harsh weather, pauses: two granted
   * rounds (`using`, 10 s lease) of one caller each have an ACQUIRE that times out on the client
   * (753 ms and 1.4 s on their way) on nodes the release reaches first; with the release writing
   * no tombstone, the late ACQUIREs place their tokens for 10 s on three of five nodes after the
   * releases ran there: the key is held by nobody for 8.6 s (blocked-by-nobody). With the
   * tombstone the late ACQUIREs are refused.
   */
  "r43-late-acquire-after-release": {
    spec: {
      seed: 1000125805,
      nodes: 5,
      weather: "harsh",
      restarts: "pauses",
      fencing: true,
      keys: 2,
      nodeRates: [1, 1, 1, 1, 1],
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            {
              start: 36,
              ops: [
                { kind: "multi", keys: [0], wait: 50, lease: 279, hold: 1166, autoExtend: false },
                {
                  kind: "acquire",
                  key: 1,
                  wait: 0,
                  lease: 519,
                  hold: 1528,
                  autoExtend: false,
                  end: "release",
                },
                { kind: "using", key: 1, wait: 581, hold: 0 },
                { kind: "using", key: 1, wait: 0, hold: 97 },
              ],
            },
            {
              start: 0,
              ops: [
                {
                  kind: "acquire",
                  key: 1,
                  wait: 0,
                  lease: 183,
                  hold: 196,
                  autoExtend: false,
                  end: "release",
                },
                {
                  kind: "idempotent",
                  key: 0,
                  body: 0,
                  lease: 561,
                  hold: 0,
                  fail: false,
                  wait: 50,
                  retries: 3,
                  gap: 796,
                },
              ],
            },
          ],
        },
        { wake: false, rate: 1, callers: [{ start: 0, ops: [{ kind: "once", job: 0, hold: 0 }] }] },
      ],
    } as ScheduleSpec,
    mutant: "r43-release-without-tombstone",
    finds: "blocked-by-nobody",
  },
  /**
   * The queue's head froze with its streams open (docs/SAFETY.md §6 "Progress"): instance 1's
   * waiter is first in the queue when its process stops; the release hands it the key (PUBLISH
   * counts its open stream), nobody takes it up, and instance 2's waiter gets the key once the
   * hand-off's TTL ran out, at its next refresh: at most `handMs` + `retryDelayMax` of idle time.
   */
  "q-frozen-head": {
    spec: {
      seed: 5,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      stops: [{ instance: 1, at: 200, streams: "open" }],
      instances: [
        { wake: false, rate: 1, callers: [caller(0, acquire(1_000, 0, 300))] },
        { wake: false, rate: 1, callers: [caller(50, acquire(1_000, 5_000, 10))] },
        { wake: false, rate: 1, callers: [caller(100, acquire(1_000, 5_000, 10))] },
      ],
    },
  },
  /** As `q-frozen-head`, but the head was killed (its streams closed): the release skips it. */
  "q-killed-head": {
    spec: {
      seed: 5,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      stops: [{ instance: 1, at: 200, streams: "closed" }],
      instances: [
        { wake: false, rate: 1, callers: [caller(0, acquire(1_000, 0, 300))] },
        { wake: false, rate: 1, callers: [caller(50, acquire(1_000, 5_000, 10))] },
        { wake: false, rate: 1, callers: [caller(100, acquire(1_000, 5_000, 10))] },
      ],
    },
  },
  /**
   * r1 (docs/SAFETY.md §2 RELEASE, L3): the campaign's finding at seed 20261144 (`--path
   * 11486:33:…`, shrunk), harsh weather, fencing, 3 nodes. Two granted rounds with `wait: 0` (an
   * `acquire`, T 833 ms, and the `using` after it, T 10 s) each have one ACQUIRE that times out
   * on the client and runs on its node within T after the round's release ran there (node 2 and
   * node 0). The release of such a grant writes the token's tombstone on the nodes whose request
   * went unheard, so the late ACQUIRE places nothing. Undone (RELEASE writes no tombstone), both
   * place their tokens with nobody holding them, 1 ms together on a majority.
   */
  "r1-late-acquire-after-release": {
    spec: {
      seed: 1_695_128_281,
      nodes: 3,
      weather: "harsh",
      restarts: "none",
      fencing: true,
      keys: 1,
      nodeRates: [1, 1, 1, 1, 1],
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            caller(139, acquire(833, 0, 148, { extend: 108 }), {
              kind: "using",
              key: 0,
              wait: 0,
              hold: 0,
            }),
            caller(0, {
              kind: "idempotent",
              key: 0,
              body: 0,
              lease: 150,
              hold: 0,
              fail: false,
              wait: 50,
            }),
          ],
        },
      ],
    },
    mutant: "r43-release-without-tombstone",
    finds: "blocked-by-nobody",
  },
  /**
   * q43 (seed 20261143, schedule 2569, shrunk; a client fix, no mutant): a waiter of instance 2
   * (place 391) is handed the key on nodes 0 and 2 by a release; node 2's message comes on the
   * stream before the answer of the look whose ACQUIRE ran there just before the release (held).
   * The client let that older refusal erase the newer hand-off, counted one node, passed after
   * its patience, and the pass handed the key to a caller of instance 1 placed at 794
   * ("queue-order"). Fixed (`Tally.lost` forgets only earlier looks' evidence), the waiter is
   * granted with the two hand-offs, before that caller: `test/sim/sim.test.ts`.
   */
  "q43-handoff-before-refusal": {
    spec: {
      seed: 1065929384,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      nodeRates: [0.99979, 1, 1.00137, 1, 1],
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            {
              start: 0,
              ops: [
                {
                  kind: "acquire",
                  key: 0,
                  wait: 0,
                  lease: 150,
                  hold: 0,
                  autoExtend: false,
                  end: "release",
                },
              ],
            },
          ],
        },
        {
          wake: false,
          rate: 1,
          callers: [
            {
              start: 0,
              ops: [
                {
                  kind: "idempotent",
                  key: 0,
                  body: 0,
                  lease: 150,
                  hold: 147,
                  fail: true,
                  wait: 0,
                  retries: 1,
                  gap: 50,
                },
                {
                  kind: "handoff",
                  key: 0,
                  wait: 50,
                  lease: 368,
                  hold: 224,
                  ticketLease: 252,
                  deliveries: 2,
                  to: 0,
                  delay: 113,
                },
                { kind: "scheduled", job: 0, time: 0, hold: 0 },
              ],
            },
            {
              start: 94,
              ops: [
                { kind: "using", key: 0, wait: 0, hold: 0 },
                { kind: "pause", ms: 679 },
                { kind: "using", key: 0, wait: 210, hold: 0 },
                { kind: "pause", ms: 1 },
              ],
            },
            {
              start: 0,
              ops: [
                { kind: "once", job: 0, hold: 0 },
                { kind: "idempotent", key: 0, body: 0, lease: 150, hold: 0, fail: false, wait: 0 },
                { kind: "scheduled", job: 0, time: 0, hold: 0 },
              ],
            },
          ],
        },
        {
          wake: false,
          rate: 1.00423,
          callers: [
            {
              start: 323,
              ops: [
                {
                  kind: "acquire",
                  key: 0,
                  wait: 0,
                  lease: 150,
                  hold: 0,
                  autoExtend: false,
                  end: "release",
                },
                {
                  kind: "acquire",
                  key: 0,
                  wait: 0,
                  lease: 150,
                  hold: 0,
                  autoExtend: false,
                  end: "release",
                },
                {
                  kind: "acquire",
                  key: 0,
                  wait: 50,
                  lease: 150,
                  hold: 0,
                  autoExtend: false,
                  end: "release",
                },
                { kind: "using", key: 0, wait: 602, hold: 0 },
              ],
            },
            {
              start: 331,
              ops: [
                {
                  kind: "acquire",
                  key: 0,
                  wait: 50,
                  lease: 150,
                  hold: 49,
                  autoExtend: false,
                  end: "release",
                },
                { kind: "idempotent", key: 0, body: 0, lease: 150, hold: 0, fail: false, wait: 50 },
                {
                  kind: "acquire",
                  key: 0,
                  wait: 50,
                  lease: 150,
                  hold: 0,
                  autoExtend: false,
                  end: "release",
                },
              ],
            },
          ],
        },
      ],
    },
  },
  /**
   * x (docs/SAFETY.md §3 "extend, lost"): the campaign's finding at seed 20261201, schedule
   * 35,165, shrunk. A holder without auto-extension (lease 150 ms) calls `extend(3000)` a few ms
   * before its abort timer: EXTEND runs on two nodes while the timer moves the handle to `lost`,
   * and the holder crashes. The handle releases its token at V, so the waiter of its instance
   * gets the key then. Undone, the nodes keep the token 3 s, held by nobody, and the waiter gives
   * up (liveness).
   */
  "x-extend-outlived-loss": {
    spec: {
      seed: 5,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            caller(0, acquire(150, 50, 10), { kind: "using", key: 0, wait: 2_500, hold: 0 }),
            caller(0, acquire(150, 0, 212, { extend: 3_000, end: "crash" })),
          ],
        },
      ],
    },
    mutant: "x-lost-keeps-extension",
    finds: "liveness",
  },
  /**
   * q11 (docs/SAFETY.md §2 PASS, §6 "The queue"): found by the campaign on 7faa01a (`npm run sim
   * -- --seed 20261290`, schedule 8,412, shrunk; pre-existing: the same spec fails on 096ce33). 3
   * nodes, calm. Instance 1's `using` (place 216, wait ending at 1,270) is split: its look 8 was
   * refused on two nodes by instance 0's holder (place 7) and placed on the third; at 1,265 that
   * holder releases and hands it the two nodes; at 1,267, before it hears them, its stall sends
   * the pass that look 8 called for (an earlier holder on the nodes it lacked). The pass handed
   * all three nodes to the queue's next waiter, instance 2's `multi` placed at 1,015: granted at
   * 1,269, 1 ms before the waiter's end. Fixed: a pass gives way only to a waiter placed before
   * the passer, or frees the key when nobody waits; with only later waiters it keeps the token
   * (the waiter then gives up at its end, and only then is the key served). Undone ("queue-order").
   */
  "q11-pass-to-later-waiter": {
    spec: {
      seed: 0,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      nodeRates: [1, 1.00132, 0.99647, 1, 1],
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            caller(
              2,
              { kind: "using", key: 0, wait: 1002, hold: 257 },
              { kind: "using", key: 0, wait: 0, hold: 0 },
            ),
          ],
        },
        {
          wake: false,
          rate: 1,
          callers: [
            caller(218, acquire(150, 0, 0), acquire(150, 0, 0), {
              kind: "using",
              key: 0,
              wait: 1043,
              hold: 0,
            }),
          ],
        },
        {
          wake: false,
          rate: 1,
          callers: [
            caller(228, acquire(150, 777, 0), acquire(150, 0, 0), multi([0], 254, 150, 0)),
            caller(0, acquire(1_000, 50, 1_053), {
              kind: "idempotent",
              ...{ key: 0, body: 0, lease: 150, hold: 0, fail: false, wait: 50 },
              ...{ retries: 1, gap: 50 },
            }),
          ],
        },
      ],
    },
    mutant: "q11-pass-to-later-waiter",
    finds: "queue-order",
  },
  /**
   * q8 (docs/SAFETY.md §2 EXTEND, P4): found by the campaign on 1640471 (`npm run sim -- --seed
   * 20261261`, schedule 12,666, shrunk): 5 nodes, faulty weather. c1 of instance 0 (`acquire`,
   * extend 203) waits in the queues; after a look that showed an earlier caller ahead it passes
   * (look 2), and the pass to one node is delayed. That node's token was placed by look 1. c1 is
   * granted by hand-offs of look 2 on three other nodes, and its extension answers on that node
   * too and counts it; then the late pass runs there and removes the token (its record says look
   * 1). The extension's majority now rests on two nodes, and a waiter of instance 1 is granted
   * 0.14 ms before c1's extended validity ends. Fixed: EXTEND raises the holder's recorded look
   * past every pass, in the step that finds the token. Undone ("overlap").
   */
  "q8-late-pass-after-extend": {
    spec: {
      seed: 2,
      nodes: 5,
      weather: "faulty",
      restarts: "none",
      fencing: false,
      keys: 1,
      nodeRates: [1, 1, 1, 1, 1],
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            caller(82, { kind: "using", key: 0, wait: 129, hold: 0 }),
            caller(
              332,
              { kind: "using", key: 0, wait: 9, hold: 0 },
              multi([0], 0, 150, 0),
              acquire(150, 128, 0, { extend: 203, end: "crash" }),
            ),
          ],
        },
        {
          wake: false,
          rate: 1.00141,
          callers: [
            caller(
              94,
              { kind: "using", key: 0, wait: 707, hold: 179 },
              { kind: "scheduled", job: 0, time: 0, hold: 51 },
            ),
            caller(81, acquire(283, 50, 984), acquire(150, 0, 0)),
            caller(116, acquire(150, 749, 0), acquire(459, 278, 0), {
              kind: "idempotent",
              ...{ key: 0, body: 0, lease: 150, hold: 0, fail: false, wait: 50 },
            }),
          ],
        },
      ],
    },
    mutant: "q8-extend-not-marked",
    finds: "overlap",
  },
  /**
   * x (docs/SAFETY.md §6 "The queue": a pass acts on one look): found with the permit waiters'
   * campaigns (`npm run sim -- --seed 12 --path 86 --semaphores --fault-free`, shrunk; no
   * semaphore caller takes part). A `multi` on [k0] waits behind a holder; its look saw the
   * holder ahead and it passed, then passed again on that look's `ahead` with no look between,
   * after the holder had released and the nodes had handed it the key: the second pass gave them
   * to a caller placed 157 ms after it ("queue-order"). Its mutant (`x-pass-keeps-aheads`, a pass
   * keeps the aheads) failed this schedule until the stall bound counted only refreshes as news;
   * with two stalls per refresh, neither this schedule nor 8,000 searched ones (seeds 12 and 16,
   * `--semaphores`/`--crowded --fault-free`) expose it any more: the schedule stays as a check of
   * the fix, the mutant for `npm run sim -- --mutant`.
   */
  "x-pass-on-stale-look": {
    spec: {
      seed: 2061465223,
      nodes: 3,
      weather: "calm",
      restarts: "none",
      fencing: false,
      keys: 1,
      nodeRates: [1, 1, 1, 1, 1],
      instances: [
        {
          wake: false,
          rate: 1,
          callers: [
            {
              start: 230,
              ops: [
                {
                  kind: "using",
                  key: 0,
                  wait: 34,
                  hold: 144,
                },
              ],
            },
          ],
        },
        {
          wake: false,
          rate: 1,
          callers: [
            {
              start: 232,
              ops: [
                {
                  kind: "multi",
                  keys: [0],
                  wait: 183,
                  lease: 150,
                  hold: 0,
                  autoExtend: false,
                },
              ],
            },
          ],
        },
        {
          wake: false,
          rate: 1,
          callers: [
            {
              start: 45,
              ops: [
                {
                  kind: "acquire",
                  key: 0,
                  wait: 0,
                  lease: 261,
                  hold: 187,
                  autoExtend: false,
                  end: "release",
                },
                {
                  kind: "idempotent",
                  key: 0,
                  body: 0,
                  lease: 150,
                  hold: 139,
                  fail: false,
                  wait: 50,
                },
                {
                  kind: "multi",
                  keys: [0],
                  wait: 0,
                  lease: 150,
                  hold: 0,
                  autoExtend: false,
                },
              ],
            },
            {
              start: 389,
              ops: [
                {
                  kind: "using",
                  key: 0,
                  wait: 25,
                  hold: 0,
                },
                {
                  kind: "idempotent",
                  key: 0,
                  body: 0,
                  lease: 150,
                  hold: 0,
                  fail: false,
                  wait: 50,
                  retries: 1,
                  gap: 50,
                },
              ],
            },
            {
              start: 233,
              ops: [
                {
                  kind: "multi",
                  keys: [0],
                  wait: 50,
                  lease: 150,
                  hold: 22,
                  autoExtend: false,
                },
              ],
            },
          ],
        },
        {
          wake: false,
          rate: 1,
          callers: [
            {
              start: 0,
              ops: [
                {
                  kind: "semaphore",
                  sem: 0,
                  how: "acquire",
                  wait: 50,
                  lease: 150,
                  hold: 0,
                  autoExtend: false,
                  end: "release",
                },
              ],
            },
          ],
          permits: [2, 2],
        },
      ],
    } as ScheduleSpec,
  },
  ...SEMAPHORE_REGRESSIONS,
} satisfies Record<string, Regression>;
