/**
 * The semaphore's named schedules (docs/design/semaphore.md §5 "Regressions"; docs/SAFETY.md
 * §4c): the partition that defeats a count per node, a client clock seconds ahead, a look that
 * lands after its permit's release, a re-sent look, a trim after a slow node, and for permit
 * waiters a `tryAcquire` looking while a waiter's slot expired and a waiter served after an
 * expiry (`check/permit-waits.ts`). Each passes
 * with the library as it is; with `mutant` the simulation finds `finds`. Merged into
 * `REGRESSIONS` (`regressions.ts`), so `sim.test.ts` runs them as it runs the lock's.
 *
 * @module
 */

import type { Regression } from "./regressions";
import type { SemaphoreOpSpec } from "./workload/semaphore";
import type { CallerSpec, ScheduleSpec } from "./workload/spec";

/** `acquire` a permit of `s0` with `wait`, hold it `hold` ms, then release it. */
const take = (
  lease: number,
  wait: number,
  hold: number,
  extra: Partial<SemaphoreOpSpec> = {},
): SemaphoreOpSpec => ({
  kind: "semaphore",
  sem: 0,
  how: "acquire",
  wait,
  lease,
  hold,
  autoExtend: false,
  end: "release",
  ...extra,
});

/** A caller that starts at `start` and takes one permit (see {@link take}). */
const permit = (start: number, lease: number, wait: number, hold: number): CallerSpec => ({
  start,
  ops: [take(lease, wait, hold)],
});

/** An instance of the semaphore workload using P = `permits` for `s0`, its callers given. */
const instance = (permits: number, ...callers: CallerSpec[]) => ({
  wake: false,
  rate: 1,
  permits: [permits],
  callers,
});

const calm = (nodes: 1 | 3 | 5): Omit<ScheduleSpec, "instances"> => ({
  seed: 1,
  nodes,
  weather: "calm",
  restarts: "none",
  fencing: false,
  keys: 1,
});

export const SEMAPHORE_REGRESSIONS = {
  /**
   * The permit-order property's gap (docs/SAFETY.md §4c "Order"), found by the campaign at seed
   * 20261291 (schedule 3,978, shrunk): instance 1's waiter (P 1) froze at 487 with its streams
   * open; the release of slot 0 on two nodes handed it to the frozen waiter, the hand-offs lapsed
   * after `handMs`, and instance 2's `tryAcquire` took slot 0 at 772, 0.7 ms before the waiter's
   * wait would have ended. A frozen waiter takes no turn: the property now judges a waiter only
   * until its process froze, as permit-liveness already did. No library change; no mutant.
   */
  "s-frozen-waiter-overtaken": {
    spec: {
      ...calm(3),
      seed: 0,
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
        {
          wake: false,
          rate: 1,
          callers: [
            {
              start: 0,
              ops: [take(150, 0, 420), take(150, 0, 0), take(150, 343, 0, { abortAfter: 343 })],
            },
            { start: 0, ops: [take(150, 0, 0)] },
          ],
          permits: [1, 1],
        },
        {
          wake: false,
          rate: 1,
          callers: [
            {
              start: 98,
              ops: [take(150, 50, 0, { extend: 50 }), take(150, 0, 456, { how: "using" })],
            },
            { start: 0, ops: [take(150, 0, 765, { autoExtend: true }), take(150, 0, 0)] },
            { start: 0, ops: [take(150, 50, 152, { sem: 1 }), take(150, 0, 0)] },
          ],
          permits: [2, 1],
        },
        {
          wake: false,
          rate: 1,
          callers: [{ start: 0, ops: [take(150, 0, 0, { sem: 1 })] }],
          permits: [1, 1],
        },
      ],
      stops: [{ instance: 1, at: 487, streams: "open" }],
    },
  },
  /**
   * The design's partition (its §1): 3 nodes, P = 2, three instances acquiring at once, each cut
   * off from a different node (its requests there refused). Every node admits the two callers it
   * hears, on its two slots: a count of admissions makes all three holders
   * (`s-count-across-slots`, over-capacity); counted per slot, at most two hold.
   */
  "s-partition-pigeonhole": {
    spec: {
      ...calm(3),
      cuts: [0, 1, 2].map((i) => ({ client: i, node: i })),
      instances: [0, 1, 2].map(() => instance(2, permit(0, 2_000, 0, 1_000))),
    },
    mutant: "s-count-across-slots",
    finds: "over-capacity",
  },
  /**
   * A client's epoch clock 10 s ahead (another 10 s behind) must not evict live holders (the
   * design's §1): two permits of P = 2 held 1.5 s on 10 s leases; the clients off by 10 s call at
   * 100 and 150 ms, waiting 3 s, and are granted only once the holders release
   * (`semaphore-regressions.test.ts` checks the times). Nothing compares a client's epoch time
   * with the nodes' data.
   */
  "s-client-clock-ahead": {
    spec: {
      ...calm(3),
      instances: [
        instance(2, permit(0, 10_000, 0, 1_500), permit(0, 10_000, 0, 1_500)),
        { ...instance(2, permit(100, 2_000, 3_000, 100)), offsetMs: 10_000 },
        { ...instance(2, permit(150, 2_000, 3_000, 100)), offsetMs: -10_000 },
      ],
    },
  },
  /**
   * L3 for permits: with P = 1 (no trim follows a grant), A's look reaches node 2 a second late,
   * after A's release there, and B's look reaches node 1 a second late, after B's release there.
   * The releases' tombstones stop both; without them (`s-release-without-tombstone`) A's token
   * lands on node 2 and B's on node 1: slot 0 held on a majority by nobody.
   */
  "s-late-look-after-release": {
    spec: {
      ...calm(3),
      late: [
        { node: 2, from: 0, to: 1, by: 1_000 },
        { node: 1, from: 100, to: 101, by: 1_000 },
      ],
      instances: [instance(1, permit(0, 2_000, 0, 20)), instance(1, permit(100, 2_000, 0, 20))],
    },
    mutant: "s-release-without-tombstone",
    finds: "blocked-by-nobody",
  },
  /**
   * S1 (found by `npm run sim -- --seed 7 --mutant s-place-second-slot`, shrunk): in harsh
   * weather a look's reply from node 2 is lost after it ran and the look is re-sent; the re-send
   * finds the token on its slot. Without the "find" scan it places the token on the other slot.
   */
  "s-resent-look": {
    spec: {
      seed: 287612526,
      nodes: 3,
      weather: "harsh",
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
        {
          wake: false,
          rate: 1,
          permits: [2, 2],
          callers: [
            {
              start: 0,
              ops: [take(150, 0, 0), take(207, 70, 0)],
            },
          ],
        },
        instance(2, permit(0, 150, 50, 0)),
      ],
    },
    mutant: "s-place-second-slot",
    finds: "one-slot-per-token",
  },
  /**
   * The trim: H holds slot 0 and releases at 100, but its release reaches node 2 a second late.
   * C's look (P = 2, from 200) is decided on nodes 0 and 1 naming slot 0, and node 2, whose slot
   * 0 still holds H's token, places C's on slot 1 and answers late (a slow request): the trim
   * then frees slot 1 there (`semaphore-regressions.test.ts` checks it), and D, at 400, takes
   * slot 1; E, at 401, finds both held. A trim that also clears the permit's slot everywhere
   * (`s-trim-everywhere`) frees C's slot 0 at once: D and E both get a permit while C holds one.
   * (The nodes' mutant `s-trim-deletes-kept-slot` finds nothing here or anywhere: see it.)
   */
  "s-trim-late-node": {
    spec: {
      ...calm(3),
      late: [
        { node: 2, from: 100, to: 110, by: 1_000 },
        { node: 2, from: 200, to: 201, by: 100 },
      ],
      instances: [
        instance(2, permit(0, 3_000, 0, 100)),
        instance(2, permit(200, 3_000, 0, 600)),
        instance(2, permit(400, 3_000, 0, 200)),
        instance(2, permit(401, 3_000, 0, 200)),
      ],
    },
    mutant: "s-trim-everywhere",
    finds: "over-capacity",
  },
  /**
   * §4c "Order": H (P = 1, lease 500 ms) crashes holding the permit; W calls at 50 and waits in
   * the room. The slot expires at about 500 with no script to hand it on, and T, a `tryAcquire`
   * of an instance whose clock is 10 s behind, looks in the few ms before W's look at the
   * expiry: its SEM_ACQUIRE hands the slot to W and T finds it held. With a call that does not
   * wait carrying its call's place (`s-try-keeps-place`), T comes 10 s before W and takes it.
   */
  "s-try-before-waiter": {
    spec: {
      ...calm(3),
      instances: [
        instance(1, { start: 0, ops: [take(500, 0, 100, { end: "crash" })] }),
        instance(1, permit(50, 1_000, 2_000, 100)),
        {
          ...instance(1, { start: 501, ops: [take(1_000, 0, 100, { how: "try" })] }),
          offsetMs: -10_000,
        },
      ],
    },
    mutant: "s-try-keeps-place",
    finds: "permit-order",
  },
  /**
   * §6 "Progress" for permits: H (P = 1, lease 500 ms) crashes holding the permit; W calls at 50
   * and waits 2.5 s. The slot expires at about 500 with no script to hand it on; W's next look
   * (at the expiry it read, or its refresh) places its token there. With looks that only
   * register (`s-look-never-places`), nothing serves W: it gives up at 2.55 s with the slot free
   * for over 2 s, beyond the liveness slack (1.9 s).
   */
  "s-expired-slot-waiter": {
    spec: {
      ...calm(3),
      instances: [
        instance(1, { start: 0, ops: [take(500, 0, 100, { end: "crash" })] }),
        instance(1, permit(50, 1_000, 2_500, 100)),
      ],
    },
    mutant: "s-look-never-places",
    finds: "permit-liveness",
  },
} satisfies Record<string, Regression>;
