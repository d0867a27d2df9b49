/**
 * The semaphore workload (docs/design/semaphore.md §5 "Workload"): instances of their own whose
 * callers take permits of semaphores `s0` and `s1` with `acquire` (with and without a wait),
 * `tryAcquire` and `using`, hold them (extending, auto-extending), release them or crash, and
 * sometimes freeze with their instance; instances of one schedule may use different P for one
 * semaphore (a deploy), and their epoch clocks may be seconds apart. Every permit granted is
 * recorded with its slot, P, token and interval for `check/semaphore-props.ts`.
 *
 * Its instances come after the lock workload's and draw from their own random streams, so a
 * schedule's lock callers do what they did without them (see `scheduleSpec`).
 *
 * @module
 */

import fc from "fast-check";
import type { PermitWait } from "../check/permit-waits";
import type { PermitRecord } from "../check/semaphore-props";
import type { ActorContext } from "./actor";
import { clockRate } from "./clocks";
import type { CallerSpec, InstanceSpec, OpSpec } from "./spec";

/** One permit taken (or not) and what its holder does with it; times in ms of virtual time. */
export interface SemaphoreOpSpec {
  readonly kind: "semaphore";
  /** Semaphore `s<sem>`, with the P its instance uses for it (`InstanceSpec.permits`). */
  readonly sem: number;
  /** `acquire` (a wait of 0 throws when all are held), `try` (`tryAcquire`), or `using`. */
  readonly how: "acquire" | "try" | "using";
  readonly wait: number;
  readonly lease: number;
  readonly hold: number;
  /** `extend(extend)` in the middle of the hold. */
  readonly extend?: number | undefined;
  /** Auto-extension (always on for `using`). */
  readonly autoExtend: boolean;
  /** `release` it, or "crash" (never release: the slot must expire on its own). */
  readonly end: "release" | "crash";
  /** Abort the acquisition after this many ms (the call must then reject). */
  readonly abortAfter?: number | undefined;
}

/** The P a semaphore instance uses when its spec gives none. */
export const DEFAULT_PERMITS = 2;

const semaphoreOpSpec = (): fc.Arbitrary<SemaphoreOpSpec> =>
  fc.record(
    {
      kind: fc.constant("semaphore" as const),
      sem: fc.constantFrom(0, 0, 1),
      how: fc.constantFrom("acquire" as const, "try" as const, "using" as const),
      wait: fc.oneof(fc.constant(0), fc.integer({ min: 50, max: 3_000 })),
      lease: fc.integer({ min: 150, max: 1_500 }),
      hold: fc.integer({ min: 0, max: 2_000 }),
      extend: fc.option(fc.integer({ min: 50, max: 3_000 }), { nil: undefined }),
      autoExtend: fc.boolean(),
      end: fc.constantFrom("release" as const, "release" as const, "crash" as const),
      abortAfter: fc.option(fc.integer({ min: 0, max: 800 }), { nil: undefined, freq: 6 }),
    },
    { requiredKeys: ["kind", "sem", "how", "wait", "lease", "hold", "autoExtend", "end"] },
  );

const semaphoreCaller = (): fc.Arbitrary<CallerSpec> =>
  fc.record({
    start: fc.integer({ min: 0, max: 500 }),
    ops: fc.array<OpSpec>(
      fc.oneof(
        { weight: 6, arbitrary: semaphoreOpSpec() as fc.Arbitrary<OpSpec> },
        {
          weight: 1,
          arbitrary: fc.record({
            kind: fc.constant("pause" as const),
            ms: fc.integer({ min: 1, max: 1_000 }),
          }),
        },
      ),
      { minLength: 1, maxLength: 3 },
    ),
  });

/** What the semaphore workload adds to a schedule: its instances and a freeze of one of them. */
export interface SemaphoreWorkload {
  readonly instances: readonly InstanceSpec[];
  /** Freeze this one of `instances` at `at` ms (its process stops, its streams stay open). */
  readonly freeze?: { readonly instance: number; readonly at: number } | undefined;
}

/**
 * 1–3 instances of 1–3 callers of 1–3 operations each, P ∈ {1, 2, 3, 5} per semaphore (P = 1 is
 * the lock's cross-check), an instance now and then on another P for `s0` (a deploy that changes
 * it), an epoch clock now and then up to 30 s off (places must never matter for safety: the
 * design's §2), a freeze now and then. Shrinks towards one instance, P = 2, no deploy, exact
 * clocks.
 *
 * @example
 * fc.tuple(lockSchedule, fc.option(semaphoreWorkload())).map(([spec, sem]) => …);
 */
export const semaphoreWorkload = (): fc.Arbitrary<SemaphoreWorkload> =>
  fc.tuple(fc.constantFrom(2, 1, 2, 3, 5), fc.constantFrom(2, 1, 3, 5)).chain(([p0, p1]) =>
    fc.record(
      {
        instances: fc.array(
          fc.record(
            {
              wake: fc.constant(false),
              rate: clockRate(),
              callers: fc.array(semaphoreCaller(), { minLength: 1, maxLength: 3 }),
              permits: fc
                .option(fc.constantFrom(1, -1, 2), { nil: undefined, freq: 4 })
                .map((bump) => [Math.max(1, p0 + (bump ?? 0)), p1]),
              offsetMs: fc.option(fc.integer({ min: -30_000, max: 30_000 }), {
                nil: undefined,
                freq: 5,
              }),
            },
            { requiredKeys: ["wake", "rate", "callers", "permits"] },
          ),
          { minLength: 1, maxLength: 3 },
        ),
        freeze: fc.option(
          fc.record({
            instance: fc.integer({ min: 0, max: 2 }),
            at: fc.integer({ min: 0, max: 3_000 }),
          }),
          { nil: undefined, freq: 6 },
        ),
      },
      { requiredKeys: ["instances"] },
    ),
  );

/**
 * The drawn workload made crowded, for campaigns aimed at the permit waiters' properties (`npm
 * run sim -- --crowded`): every call waits (a `tryAcquire` becomes an `acquire`, a wait of 0 one
 * of 1.5 s), holds at most 600 ms, P at most 2, each caller twice (the copy 7 ms later), and no
 * freeze (after which liveness is not judged). The draws are the workload's own, so the default
 * schedules are unchanged.
 *
 * @example
 * semaphoreWorkload().map(crowded);
 */
export function crowded(workload: SemaphoreWorkload): SemaphoreWorkload {
  const op = (o: OpSpec): OpSpec =>
    o.kind !== "semaphore"
      ? o
      : {
          ...o,
          how: o.how === "try" ? "acquire" : o.how,
          wait: o.wait > 0 ? o.wait : 1_500,
          hold: Math.min(o.hold, 600),
        };
  const instances = workload.instances.map((instance) => ({
    ...instance,
    permits: instance.permits?.map((p) => Math.min(p, 2)),
    callers: instance.callers.flatMap((c) => {
      const ops = c.ops.map(op);
      return [
        { start: c.start, ops },
        { start: c.start + 7, ops },
      ];
    }),
  }));
  return { instances };
}

/** What a permit's holder sees of it (the library's `Permit`, as the realm returns it). */
interface HeldPermit {
  readonly token: string;
  readonly slot: number;
  readonly permits: number;
  readonly validUntil: number;
  readonly signal: AbortSignal;
  extend(lease?: number): Promise<unknown>;
}

/** Take a permit, hold it, release it (or crash), recording it; throws what the library threw. */
export async function semaphoreOp(ctx: ActorContext, op: SemaphoreOpSpec): Promise<void> {
  const { clock, lib, locks } = ctx;
  const name = `s${op.sem}`;
  const permits = ctx.permits?.[op.sem] ?? DEFAULT_PERMITS;
  const sem = lib.semaphore(locks, name, { permits });
  const controller = op.abortAfter === undefined ? undefined : new AbortController();
  if (controller !== undefined) {
    void clock.sleep(op.abortAfter ?? 0).then(() => {
      const reason = new Error("aborted by the schedule");
      reason.name = "SimAbort";
      controller.abort(reason);
    });
  }
  const signal = controller === undefined ? {} : { signal: controller.signal };
  const call = callOf(ctx, name, permits, op);
  const granted = (permit: HeldPermit) => {
    if (controller?.signal.aborted === true) {
      // Granted although the caller had aborted before the grant: the call should have rejected.
      ctx.observed.problems.push({ kind: "abort-ignored", detail: name, at: clock.now() });
    }
    const record = permitRecord(ctx, { semaphore: name, permit, ...call });
    if (call.wait !== undefined) endWait(call.wait, record.granted, "granted", record.id);
    return record;
  };
  const given = (error: unknown): never => {
    const why = (error as Error | undefined)?.name ?? "unknown";
    if (call.wait !== undefined && call.wait.end === undefined) {
      endWait(call.wait, clock.now(), why);
    }
    throw error;
  };
  if (op.how === "using") {
    const work = async (permit: HeldPermit) => {
      const record = granted(permit);
      await hold(ctx, record, permit, op);
      record.releaseStart = clock.now();
    };
    await sem.using(work, { wait: op.wait, lease: op.lease, ...signal }).catch(given);
    return;
  }
  // A crashed holder must not keep extending itself: it is gone.
  const autoExtend = op.autoExtend && op.end === "release";
  const options = { lease: op.lease, autoExtend, ...signal };
  const permit = await (op.how === "try"
    ? sem.tryAcquire(options)
    : sem.acquire({ ...options, wait: op.wait })
  ).catch(given);
  if (permit === null) return;
  const record = granted(permit);
  await hold(ctx, record, permit, op);
  if (op.end === "crash") return;
  const validAt = permit.validUntil;
  const stillHeld = !permit.signal.aborted;
  record.releaseStart = clock.now();
  const { status, outcomes } = await permit.release();
  // A release sent while valid finds the token on a majority (E3 for the slot's key), as a
  // lock's: nothing delays its requests without auto-extension.
  const sentWhileValid =
    stillHeld && !autoExtend && ctx.toGlobal(validAt) > record.releaseStart + 1;
  if (status === "expired" && sentWhileValid) {
    const seen = outcomes.map((o) => `${o.index}:${o.status}`).join(",");
    const detail = `${record.id} released while valid (until ${ctx.toGlobal(validAt)}) but reported expired (${seen})`;
    ctx.observed.problems.push({ kind: "release-misreported", detail, at: clock.now() });
  }
}

/** The hold: `extend` halfway, the record's validity end kept as the holder sees it. */
async function hold(
  ctx: ActorContext,
  record: { validEnd: number },
  permit: HeldPermit,
  op: SemaphoreOpSpec,
): Promise<void> {
  const sync = () => {
    record.validEnd = Math.max(record.validEnd, ctx.toGlobal(permit.validUntil));
  };
  await ctx.clock.sleep(Math.floor(op.hold / 2));
  if (op.extend !== undefined && !permit.signal.aborted) {
    await permit.extend(op.extend).catch(() => {});
  }
  sync();
  await ctx.clock.sleep(op.hold - Math.floor(op.hold / 2));
  sync();
}

/**
 * What a permit call is, before it is made: its place in the room (the instance's `Date.now()`
 * at the call, as the library reads it: nothing runs between; none for a call that does not
 * wait, which comes after every waiter) and, for one that waits, its record in `permitWaits`.
 */
function callOf(
  ctx: ActorContext,
  semaphore: string,
  permits: number,
  op: SemaphoreOpSpec,
): { requested: number; place?: number | undefined; wait?: PermitWait | undefined } {
  const requested = ctx.clock.now();
  if (op.how === "try" || op.wait <= 0) return { requested };
  const place = ctx.epoch?.();
  const wait: PermitWait = {
    ...{ instance: ctx.instance, semaphore, permits, requested, wait: op.wait, rate: ctx.rate },
    place,
  };
  ctx.observed.permitWaits?.push(wait);
  return { requested, place, wait };
}

function endWait(wait: PermitWait, at: number, outcome: string, grant?: string): void {
  wait.end = at;
  wait.outcome = outcome;
  if (grant !== undefined) wait.grant = grant;
}

/** The permit's record, in global time, pushed to the observations. */
function permitRecord(
  ctx: ActorContext,
  call: {
    semaphore: string;
    permit: HeldPermit;
    requested: number;
    place?: number | undefined;
  },
): PermitRecord & { validEnd: number; releaseStart?: number } {
  const { permit } = call;
  const now = ctx.clock.now();
  const id = `i${ctx.instance}/c${ctx.caller}#p${ctx.observed.permits.length}`;
  const record = {
    id,
    instance: ctx.instance,
    semaphore: call.semaphore,
    slot: permit.slot,
    token: permit.token,
    permits: permit.permits,
    granted: now,
    validEnd: ctx.toGlobal(permit.validUntil),
    requested: call.requested,
    ...(call.place === undefined ? {} : { place: call.place }),
  };
  ctx.observed.permits.push(record);
  return record;
}
