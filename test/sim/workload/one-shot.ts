/**
 * Workload pieces for the wrappers that end a lock with a done marker (docs/SAFETY.md §5 and
 * "Scheduled jobs"):
 * - `onceTicket`: `once()` (or an Idempotency-Key handler) whose job tries to hand its lock on
 *   with `lock.ticket()`: it must be refused (`ConfigurationError`) with the lock still held, and
 *   the run is then recorded like any other (the "once" and "idempotent-*" properties check it);
 * - `scheduled`: several jobs on one schedule: job `name` at scheduled time `time`, keyed as the
 *   Workers adapter keys it (`scheduled:<name>:<cron>:<time>`), so two jobs at one time never
 *   share a key and each runs at most once per time.
 *
 * @module
 */

import fc from "fast-check";
import type { ActorContext, IdempotentRun, JobRun } from "./actor";

/** A job that calls `lock.ticket()` inside its wrapper. */
export interface OnceTicketSpec {
  readonly kind: "onceTicket";
  /** `once()` on `job<key>`, or an Idempotency-Key request with key `k<key>` (body 0). */
  readonly wrapper: "once" | "idempotent";
  readonly key: number;
  readonly hold: number;
}

/** One trigger of a scheduled job. */
export interface ScheduledSpec {
  readonly kind: "scheduled";
  /** Job `cron<job>` (two Workers on the same cron). */
  readonly job: number;
  /** The scheduled time (0 or 1: duplicates and retries of one time share it). */
  readonly time: number;
  readonly hold: number;
}

export const onceTicketArbitrary = (): fc.Arbitrary<OnceTicketSpec> =>
  fc.record({
    kind: fc.constant("onceTicket" as const),
    wrapper: fc.constantFrom("once" as const, "idempotent" as const),
    key: fc.integer({ min: 0, max: 1 }),
    hold: fc.integer({ min: 0, max: 300 }),
  });

export const scheduledArbitrary = (): fc.Arbitrary<ScheduledSpec> =>
  fc.record({
    kind: fc.constant("scheduled" as const),
    job: fc.integer({ min: 0, max: 1 }),
    time: fc.integer({ min: 0, max: 1 }),
    hold: fc.integer({ min: 0, max: 300 }),
  });

/** The Workers adapter's default key of job `name` on `cron` at `time`. */
const scheduledKey = (name: string, time: number): string =>
  `scheduled:${name}:*/5 * * * *:${time}`;

/** A ticket inside a wrapper must be refused with the lock held: anything else is a problem. */
async function refusedTicket(ctx: ActorContext, lock: { ticket(): Promise<unknown> }) {
  try {
    await lock.ticket();
  } catch (error) {
    if ((error as Error | undefined)?.name === "ConfigurationError") return;
    throw error;
  }
  const detail = "ticket() inside a wrapper that completes gave a ticket";
  ctx.observed.problems.push({ kind: "unexpected-error", detail, at: ctx.clock.now() });
}

/**
 * Run a {@link OnceTicketSpec}.
 *
 * @example
 * await onceTicketOp(ctx, { kind: "onceTicket", wrapper: "once", key: 0, hold: 50 });
 */
export async function onceTicketOp(ctx: ActorContext, op: OnceTicketSpec): Promise<void> {
  const { clock, lib, locks, observed } = ctx;
  if (op.wrapper === "once") {
    const job = `job${op.key}`;
    let run: JobRun | undefined;
    const result = await lib.once(locks, job, async (lock) => {
      run = { job, at: clock.now() };
      observed.jobs.push(run);
      await refusedTicket(ctx, lock);
      await clock.sleep(op.hold);
    });
    if (run !== undefined && result.status === "ran") {
      run.recorded = result.recorded;
      run.endedAt = clock.now();
    }
    return;
  }
  const key = `k${op.key}`;
  const resolved = lib.resolveIdempotency<undefined>(
    // A 503 is an expected outcome of a faulty schedule: no server log line per request.
    { locks, lease: 1_000, wait: 0, ttl: 600_000, onUnavailable: () => undefined },
    "sim",
  );
  const body = new TextEncoder().encode("body 0");
  const request = {
    context: undefined,
    method: "POST",
    path: "/charge",
    header: (name: string) => (name.toLowerCase() === "idempotency-key" ? `"${key}"` : undefined),
    body: async () => body,
  };
  let run: IdempotentRun | undefined;
  const outcome = await lib.runIdempotent(resolved, request, async (lock) => {
    const answer = `run ${observed.idempotentRuns.length} of ${key} (i${ctx.instance}/c${ctx.caller}, ticket)`;
    run = { key, body: 0, answer, at: clock.now(), fail: false };
    observed.idempotentRuns.push(run);
    await refusedTicket(ctx, lock);
    await clock.sleep(op.hold);
    const status = lock.signal.aborted ? 503 : 200;
    const response = { status, headers: [], body: new TextEncoder().encode(answer) };
    return { result: answer, status, capture: async () => response };
  });
  const at = clock.now();
  const kind = outcome.kind === "problem" ? String(outcome.problem.status) : outcome.kind;
  const replayed =
    outcome.kind === "replay" ? new TextDecoder().decode(outcome.response.body) : undefined;
  observed.idempotentAnswers.push({
    key,
    body: 0,
    at,
    kind,
    ...(replayed === undefined ? {} : { replayed }),
  });
  if (run !== undefined && outcome.kind === "ran") {
    run.stored = outcome.stored;
    run.endedAt = at;
  }
}

/**
 * Run a {@link ScheduledSpec}: `once()` under the job's key for its time, recorded as a run of
 * that job and time (the "once" property: at most once after a recorded run, per job and time).
 *
 * @example
 * await scheduledOp(ctx, { kind: "scheduled", job: 1, time: 0, hold: 20 });
 */
export async function scheduledOp(ctx: ActorContext, op: ScheduledSpec): Promise<void> {
  const { clock, lib, locks, observed } = ctx;
  const job = scheduledKey(`cron${op.job}`, op.time);
  let run: JobRun | undefined;
  const result = await lib.once(locks, job, async () => {
    run = { job, at: clock.now() };
    observed.jobs.push(run);
    await clock.sleep(op.hold);
  });
  if (run !== undefined && result.status === "ran") {
    run.recorded = result.recorded;
    run.endedAt = clock.now();
  }
}
