/**
 * What one simulated schedule runs: the nodes, how hostile the network is, the `Locks` instances
 * (each one simulated process with its own clock) and their callers' operations. A spec plus its
 * `seed` replays exactly; fast-check generates specs ({@link scheduleSpec}) and shrinks a failing
 * one to a small spec before printing it.
 *
 * @module
 */

import fc from "fast-check";
import type { LateWindow, LinkCut } from "../runtime/cluster";
import { CLOCK_RATE_SPREAD, clockRate } from "./clocks";
import {
  type OnceTicketSpec,
  onceTicketArbitrary,
  type ScheduledSpec,
  scheduledArbitrary,
} from "./one-shot";
import {
  crowded,
  type SemaphoreOpSpec,
  type SemaphoreWorkload,
  semaphoreWorkload,
} from "./semaphore";

/** How often requests and streams misbehave (see `runtime/fates.ts` for the numbers). */
export type Weather = "calm" | "faulty" | "harsh";

/** Node-level events during the run: none, restarts that keep data, or restarts that lose it. */
export type Restarts = "none" | "pauses" | "keep" | "empty";

/** One thing a caller does with a key; all times are ms of virtual time. */
export type OpSpec =
  | {
      readonly kind: "acquire";
      readonly key: number;
      readonly wait: number;
      readonly lease: number;
      /** How long the section lasts (the read-modify-write sits in its middle). */
      readonly hold: number;
      /** `extend(lease)` in the middle of the section (shorter or longer than the lease). */
      readonly extend?: number | undefined;
      readonly autoExtend: boolean;
      /** `release` it, or "crash" (never release: the key must expire on its own). */
      readonly end: "release" | "crash";
      /** Abort the acquisition after this many ms (the call must then reject). */
      readonly abortAfter?: number | undefined;
    }
  | { readonly kind: "using"; readonly key: number; readonly wait: number; readonly hold: number }
  | {
      /**
       * One lock on several keys (docs/SAFETY.md §4b), given unsorted and maybe with duplicates: a
       * section on every key at once, then release (or expiry with `autoExtend` off and a long
       * hold).
       */
      readonly kind: "multi";
      readonly keys: readonly number[];
      readonly wait: number;
      readonly lease: number;
      readonly hold: number;
      readonly autoExtend: boolean;
    }
  | { readonly kind: "once"; readonly job: number; readonly hold: number }
  | {
      /** A request with `Idempotency-Key` `"k<key>"` through the idempotency core. */
      readonly kind: "idempotent";
      readonly key: number;
      /** Which body it sends (another body with the same key must get 422). */
      readonly body: number;
      readonly lease: number;
      readonly hold: number;
      /** The handler answers 503 (nothing may be kept). */
      readonly fail: boolean;
      /** How long a duplicate waits for the first request's result. */
      readonly wait: number;
      /**
       * A client's retries: the same request sent again this many times, `gap` ms after each
       * answer (past the claim's lease, the record alone must stop a second run).
       */
      readonly retries?: number | undefined;
      readonly gap?: number | undefined;
    }
  | {
      /**
       * Acquire, work, hand the lock on with `lock.ticket()`, and deliver the ticket (as JSON) to
       * the instances `to`, `to + 1`, … after `delay` ms each — twice is a queue's at-least-once
       * delivery — where `locks.resume(ticket)` takes it over for a section of `hold` ms.
       */
      readonly kind: "handoff";
      readonly key: number;
      readonly wait: number;
      readonly lease: number;
      readonly hold: number;
      readonly ticketLease: number;
      readonly deliveries: 1 | 2;
      readonly to: number;
      readonly delay: number;
      /**
       * A delivery whose resume fails with `QuorumError` is delivered again after this many ms
       * (a queue's redelivery of a message whose consumer failed), up to 3 times.
       */
      readonly redeliver?: number | undefined;
    }
  | OnceTicketSpec
  | ScheduledSpec
  | SemaphoreOpSpec
  | { readonly kind: "pause"; readonly ms: number };

/** One caller (an async task of an instance): starts at `start`, runs `ops` in order. */
export interface CallerSpec {
  readonly start: number;
  readonly ops: readonly OpSpec[];
}

/** One `Locks` instance: its options and clock. */
export interface InstanceSpec {
  readonly wake: boolean;
  /** Clock rate relative to real time, within {@link CLOCK_RATE_SPREAD} (0.995–1.005). */
  readonly rate: number;
  readonly callers: readonly CallerSpec[];
  /**
   * The P it uses for semaphore `s<j>` (index j; missing: `DEFAULT_PERMITS`). Given, it marks an
   * instance of the semaphore workload: tickets of the lock workload never go to it.
   */
  readonly permits?: readonly number[] | undefined;
  /** Its `Date.now()`'s offset from virtual epoch time, ms (missing: ±20 ms from the seed). */
  readonly offsetMs?: number | undefined;
}

/** A whole schedule. */
export interface ScheduleSpec {
  /** Seeds every random choice the run makes (fates, tokens, jitter, clock offsets). */
  readonly seed: number;
  readonly nodes: 1 | 3 | 5;
  readonly weather: Weather;
  readonly restarts: Restarts;
  readonly fencing: boolean;
  readonly keys: number;
  /**
   * Fence counters each node starts with (the same for every key): after a long history they
   * differ between nodes, since a look that finds only some nodes free increments only those.
   */
  readonly counters?: readonly number[] | undefined;
  /**
   * Each node's clock rate relative to real time, within {@link CLOCK_RATE_SPREAD} (index = node;
   * missing: 1, an exact clock). Their epoch offsets are drawn from `seed`.
   */
  readonly nodeRates?: readonly number[] | undefined;
  readonly instances: readonly InstanceSpec[];
  /**
   * Constructed delays (named regressions): requests sent to a node within a window arrive late
   * by a fixed amount, instead of their drawn delay (see `LateWindow` in `runtime/cluster.ts`).
   */
  readonly late?: readonly LateWindow[] | undefined;
  /** Links cut (named regressions): see `LinkCut` in `runtime/cluster.ts`. */
  readonly cuts?: readonly LinkCut[] | undefined;
  /**
   * Instances whose process stops at `at` ms (named regressions): none of its code runs again
   * (no timer, reply or message reaches it). With `streams: "open"` it froze: its streams stay
   * subscribed (PUBLISH still counts them); with "closed" it was killed: they close.
   */
  readonly stops?:
    | readonly {
        readonly instance: number;
        readonly at: number;
        readonly streams: "open" | "closed";
      }[]
    | undefined;
}

const lease = fc.integer({ min: 150, max: 1_500 });

const op = (keys: number): fc.Arbitrary<OpSpec> =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record(
        {
          kind: fc.constant("acquire" as const),
          key: fc.integer({ min: 0, max: keys - 1 }),
          wait: fc.oneof(fc.constant(0), fc.integer({ min: 50, max: 4_000 })),
          lease,
          hold: fc.integer({ min: 0, max: 2_000 }),
          extend: fc.option(fc.integer({ min: 50, max: 3_000 }), { nil: undefined }),
          autoExtend: fc.boolean(),
          end: fc.constantFrom("release" as const, "release" as const, "crash" as const),
          abortAfter: fc.option(fc.integer({ min: 0, max: 800 }), { nil: undefined, freq: 6 }),
        },
        { requiredKeys: ["kind", "key", "wait", "lease", "hold", "autoExtend", "end"] },
      ),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("using" as const),
        key: fc.integer({ min: 0, max: keys - 1 }),
        wait: fc.integer({ min: 0, max: 3_000 }),
        hold: fc.integer({ min: 0, max: 300 }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("multi" as const),
        keys: fc.array(fc.integer({ min: 0, max: keys - 1 }), { minLength: 1, maxLength: 3 }),
        wait: fc.oneof(fc.constant(0), fc.integer({ min: 50, max: 3_000 })),
        lease,
        hold: fc.integer({ min: 0, max: 1_500 }),
        autoExtend: fc.boolean(),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("once" as const),
        job: fc.integer({ min: 0, max: 1 }),
        hold: fc.integer({ min: 0, max: 300 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("idempotent" as const),
        key: fc.integer({ min: 0, max: 1 }),
        body: fc.constantFrom(0, 0, 0, 1),
        lease,
        hold: fc.integer({ min: 0, max: 1_000 }),
        fail: fc.constantFrom(false, false, false, true),
        wait: fc.oneof(fc.constant(0), fc.integer({ min: 50, max: 2_000 })),
      }),
    },
    {
      // Retried requests (docs/SAFETY.md §6b I1): the faults of every round (lookup, claim, record write)
      // meet retries that come after the claim ran out.
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("idempotent" as const),
        key: fc.integer({ min: 0, max: 1 }),
        body: fc.constant(0),
        lease,
        hold: fc.integer({ min: 0, max: 600 }),
        fail: fc.constantFrom(false, false, false, true),
        wait: fc.oneof(fc.constant(0), fc.integer({ min: 50, max: 1_000 })),
        retries: fc.integer({ min: 1, max: 3 }),
        gap: fc.integer({ min: 50, max: 1_600 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("handoff" as const),
        key: fc.integer({ min: 0, max: keys - 1 }),
        wait: fc.oneof(fc.constant(0), fc.integer({ min: 50, max: 2_000 })),
        lease,
        hold: fc.integer({ min: 0, max: 600 }),
        ticketLease: lease,
        deliveries: fc.constantFrom(1 as const, 1 as const, 2 as const),
        to: fc.integer({ min: 0, max: 2 }),
        delay: fc.integer({ min: 0, max: 1_200 }),
        redeliver: fc.option(fc.integer({ min: 0, max: 800 }), { nil: undefined }),
      }),
    },
    { weight: 1, arbitrary: onceTicketArbitrary() },
    { weight: 1, arbitrary: scheduledArbitrary() },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("pause" as const),
        ms: fc.integer({ min: 1, max: 1_000 }),
      }),
    },
  );

const caller = (keys: number): fc.Arbitrary<CallerSpec> =>
  fc.record({
    start: fc.integer({ min: 0, max: 500 }),
    ops: fc.array(op(keys), { minLength: 1, maxLength: 4 }),
  });

const instance = (keys: number): fc.Arbitrary<InstanceSpec> =>
  fc.record({
    wake: fc.boolean(),
    rate: clockRate(),
    callers: fc.array(caller(keys), { minLength: 1, maxLength: 3 }),
  });

/**
 * Random schedules: 1, 3 or 5 nodes, 1–3 instances of 1–3 callers with 1–4 operations each, on
 * 1–3 keys (mostly 2: contention, and for locks on several keys, sets that overlap); in one
 * schedule of eight, the semaphore workload's instances after those (`workload/semaphore.ts`;
 * rarer would test it less, more would lengthen `npm test`'s bounded campaign).
 * Shrinks towards fewer instances, callers and operations, calm weather, no restarts, no
 * semaphores.
 *
 * The lock workload is drawn first and as it was before the semaphore's (the same seed gives the
 * same lock schedule), and the semaphore's instances draw from random streams of their own in
 * the run: a schedule's lock callers behave the same with or without them.
 *
 * @example
 * fc.assert(fc.asyncProperty(scheduleSpec(), async (spec) => (await runSchedule(spec)).ok));
 */
export function scheduleSpec(focus: ScheduleFocus = {}): fc.Arbitrary<ScheduleSpec> {
  const semaphores = focus.crowded
    ? semaphoreWorkload().map(crowded)
    : focus.semaphores
      ? semaphoreWorkload()
      : fc.oneof(
          { weight: 7, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: semaphoreWorkload() },
        );
  return fc.tuple(lockSchedule(), semaphores).map(([spec, workload]) => {
    const mixed = withSemaphores(spec, workload);
    return focus.faultFree ? { ...mixed, weather: "calm", restarts: "none" } : mixed;
  });
}

/**
 * A campaign aimed at one part (`npm run sim -- --semaphores --fault-free`): the same draws, so
 * a seed gives the same lock schedules, with the semaphore workload in every schedule (or its
 * crowded form, `crowded` in workload/semaphore.ts), and/or every schedule fault-free (calm, no
 * restarts: where liveness and order are judged).
 */
export interface ScheduleFocus {
  readonly semaphores?: boolean | undefined;
  readonly crowded?: boolean | undefined;
  readonly faultFree?: boolean | undefined;
}

/** `spec` with the semaphore workload's instances after its own, and their freeze. */
export function withSemaphores(
  spec: ScheduleSpec,
  workload: SemaphoreWorkload | undefined,
): ScheduleSpec {
  if (workload === undefined) return spec;
  const first = spec.instances.length;
  const { freeze } = workload;
  const frozen =
    freeze === undefined
      ? []
      : [
          {
            instance: first + (freeze.instance % workload.instances.length),
            at: freeze.at,
            streams: "open" as const,
          },
        ];
  return {
    ...spec,
    instances: [...spec.instances, ...workload.instances],
    ...(frozen.length === 0 ? {} : { stops: [...(spec.stops ?? []), ...frozen] }),
  };
}

/** The lock workload's schedules (what {@link scheduleSpec} drew before the semaphore's). */
function lockSchedule(): fc.Arbitrary<ScheduleSpec> {
  return fc.constantFrom(2, 1, 2, 3).chain((keys) =>
    fc.record({
      seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      nodes: fc.constantFrom(3 as const, 1 as const, 5 as const),
      weather: fc.constantFrom("calm" as const, "faulty" as const, "harsh" as const),
      restarts: fc.constantFrom(
        "none" as const,
        "pauses" as const,
        "keep" as const,
        "empty" as const,
      ),
      fencing: fc.boolean(),
      keys: fc.constant(keys),
      counters: fc.option(
        fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 5, maxLength: 5 }),
        {
          nil: undefined,
        },
      ),
      nodeRates: fc.array(clockRate(), { minLength: 5, maxLength: 5 }),
      instances: fc.array(instance(keys), { minLength: 1, maxLength: 3 }),
    }),
  );
}

/** Number of operations in a spec (for the report). */
export const opsOf = (spec: ScheduleSpec): number =>
  spec.instances.reduce((n, i) => n + i.callers.reduce((m, c) => m + c.ops.length, 0), 0);
