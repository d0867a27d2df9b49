/**
 * One simulated caller: runs its operations against its instance's `Locks` (the library's real
 * code, loaded in that instance's realm) and records what happened in the history format of the
 * safety checker (`test/safety/harness/history.ts`), on the global virtual clock.
 *
 * Errors thrown by the library come from another realm: they are told apart by `name`, never by
 * `instanceof`.
 *
 * @module
 */

import type * as Edgelock from "../../../src/index";
import type { GrantRecord } from "../../safety/harness/history";
import type { PermitWait } from "../check/permit-waits";
import type { PermitRecord } from "../check/semaphore-props";
import type { Lib } from "../runtime/realm";
import { onceTicketOp, scheduledOp } from "./one-shot";
import { semaphoreOp } from "./semaphore";
import type { OpSpec } from "./spec";
import type { Clock, SimStore } from "./store";

type Lock = Edgelock.Lock;

/** An acquisition that waited (wait > 0), granted or not: what the liveness checks read. */
export interface WaitRecord {
  readonly instance: number;
  readonly key: string;
  /** All its keys when it waits for a lock on several (distinct) keys. */
  readonly keys?: readonly string[] | undefined;
  /** It listens for wake-ups (`wake`, one key): every release serves it in turn. */
  readonly listens: boolean;
  readonly requested: number;
  /** Its wait, in ms of its instance's clock. */
  readonly wait: number;
  /** Its instance's clock rate (its ms per virtual ms; 1 when not given). */
  readonly rate?: number | undefined;
  /** Granted, or given up (the error's name), at `end`. */
  outcome?: string;
  end?: number;
  /** The grant's id when granted. */
  grant?: string | undefined;
}

/** Something the library did that it must never do, whatever the faults. */
export interface Problem {
  readonly kind: "unexpected-error" | "release-misreported" | "abort-ignored";
  readonly detail: string;
  readonly at: number;
}

/** A run of a `once()` job. */
export interface JobRun {
  readonly job: string;
  readonly at: number;
  /** The result's `recorded` and when `once()` returned, when known. */
  recorded?: boolean;
  endedAt?: number;
}

/** A run of an idempotent request's handler (under its claim). */
export interface IdempotentRun {
  readonly key: string;
  readonly body: number;
  /** The response body it answered: unique per run. */
  readonly answer: string;
  readonly at: number;
  readonly fail: boolean;
  /** Whether its response was kept on a majority, and when the request returned. */
  stored?: boolean;
  endedAt?: number;
  /** The status it answered (below 500: an answer the layer keeps). */
  status?: number;
  /** `onUnrecorded` was called for it: its record could not reach a majority. */
  told?: boolean;
  /** Its claim's validity end (global time) when the handler answered. */
  claimEnd?: number;
}

/** What an idempotent request got back. */
export interface IdempotentAnswer {
  readonly key: string;
  readonly body: number;
  readonly at: number;
  /** `ran`, `replay` or a problem's status (`409`, `422`, `503`, …). */
  readonly kind: string;
  /** The replayed response body. */
  readonly replayed?: string;
}

/** Everything the actors of one schedule record. */
export interface Observations {
  readonly grants: GrantRecord[];
  /** Instance of each grant, by id. */
  readonly owner: Map<string, number>;
  readonly waits: WaitRecord[];
  readonly jobs: JobRun[];
  readonly idempotentRuns: IdempotentRun[];
  readonly idempotentAnswers: IdempotentAnswer[];
  readonly problems: Problem[];
  /** Permits of the semaphore workload (`workload/semaphore.ts`), in grant order. */
  readonly permits: PermitRecord[];
  /** Its permit calls that wait (`wait` > 0), granted or not: what permit liveness reads. */
  readonly permitWaits?: PermitWait[];
  /**
   * Grants whose caller found no other caller of its instance holding or waiting for the same
   * key (or set) when it called: the library's line was idle, so it went straight to the nodes.
   * A polling waiter has no bound against these (docs/SAFETY.md §6).
   */
  readonly soloGrants: Set<string>;
  /** Grants of `locks.resume` (a ticket's lock taken over: no new caller, no place of its own). */
  readonly resumes?: Set<string>;
}

/** Another instance, as a ticket's receiver sees it. */
export interface Peer {
  readonly lib: Lib;
  readonly locks: Edgelock.Locks;
  readonly instance: number;
  readonly toGlobal: (epochMs: number) => number;
}

/** What an actor needs from its instance. */
export interface ActorContext {
  /** Every instance of the schedule (ticket receivers), by index. */
  readonly peers: readonly Peer[];
  readonly clock: Clock;
  readonly store: SimStore;
  readonly lib: Lib;
  readonly locks: Edgelock.Locks;
  readonly instance: number;
  readonly caller: number;
  /** Converts the instance's `Date.now()` time (a handle's `validUntil`) to global time. */
  readonly toGlobal: (epochMs: number) => number;
  /** The instance's `Date.now()` (a permit call's place in the room). */
  readonly epoch?: (() => number) | undefined;
  readonly observed: Observations;
  /** Full key names (the same for every instance). */
  readonly keyName: (key: number) => string;
  /** Callers of this instance holding or waiting, per key or set (shared by its callers). */
  readonly active: Map<string, number>;
  /** This instance's `wake` option. */
  readonly wake: boolean;
  /** This instance's clock rate (its ms per virtual ms), as the spec gives it. */
  readonly rate?: number | undefined;
  /** The running operation's caller found its line idle (see `Observations.soloGrants`). */
  readonly solo?: boolean | undefined;
  /** The P this instance uses for semaphore `s<j>` (index j), as the spec gives it. */
  readonly permits?: readonly number[] | undefined;
}

/** Errors a caller may get from the library under faults; anything else is a bug. */
const EXPECTED = new Set([
  "LockBusyError",
  "SemaphoreBusyError",
  "QuorumError",
  "LockLostError",
  "BudgetExhaustedError",
  "SimAbort",
]);

/** Run one caller's operations in order. Never throws: problems are recorded. */
export async function runCaller(ctx: ActorContext, ops: readonly OpSpec[]): Promise<void> {
  for (const op of ops) {
    const line = lineOf(ctx, op);
    const solo = line !== undefined && (ctx.active.get(line) ?? 0) === 0;
    if (line !== undefined) ctx.active.set(line, (ctx.active.get(line) ?? 0) + 1);
    try {
      await runOp({ ...ctx, solo }, op);
    } catch (error) {
      const name = (error as Error | undefined)?.name ?? String(error);
      if (!EXPECTED.has(name)) {
        const detail = `${op.kind}: ${name}: ${(error as Error | undefined)?.message}`;
        ctx.observed.problems.push({ kind: "unexpected-error", detail, at: ctx.clock.now() });
      }
    } finally {
      if (line !== undefined) ctx.active.set(line, (ctx.active.get(line) ?? 1) - 1);
    }
  }
}

/** The library's line an operation's lock stands in (its key, or its set), if it takes a lock. */
function lineOf(ctx: ActorContext, op: OpSpec): string | undefined {
  switch (op.kind) {
    case "acquire":
    case "using":
    case "handoff":
      return ctx.keyName(op.key);
    case "multi":
      return [...new Set(op.keys.map((k) => ctx.keyName(k)))].sort().join(", ");
    default:
      return undefined;
  }
}

async function runOp(ctx: ActorContext, op: OpSpec): Promise<void> {
  const { clock, locks, lib } = ctx;
  switch (op.kind) {
    case "pause":
      return clock.sleep(op.ms);
    case "once": {
      const job = `job${op.job}`;
      let run: JobRun | undefined;
      const result = await lib.once(locks, job, async () => {
        run = { job, at: clock.now() };
        ctx.observed.jobs.push(run);
        await clock.sleep(op.hold);
      });
      if (run !== undefined && result.status === "ran") {
        run.recorded = result.recorded;
        run.endedAt = clock.now();
      }
      return;
    }
    case "using": {
      const key = ctx.keyName(op.key);
      const wait = waitRecord(ctx, key, op.wait);
      const work = async (lock: Lock) => {
        const record = grantRecord(ctx, key, wait, lock);
        await section(ctx, record, lock, op.hold, undefined);
        record.releaseStart = clock.now();
      };
      await locks.using(key, work, { wait: op.wait }).catch((e: unknown) => ended(ctx, wait, e));
      return;
    }
    case "acquire":
      return acquireOp(ctx, op);
    case "multi":
      return multiOp(ctx, op);
    case "idempotent":
      return idempotentOp(ctx, op);
    case "handoff":
      return handoffOp(ctx, op);
    case "onceTicket":
      return onceTicketOp(ctx, op);
    case "scheduled":
      return scheduledOp(ctx, op);
    case "semaphore":
      return semaphoreOp(ctx, op);
  }
}

/**
 * A delivery's resume; with `redeliver`, a `QuorumError` (the consumer failed, the ticket is
 * intact) makes the queue deliver the message again after `redeliver` ms, up to 3 times.
 */
async function resumeDelivered(
  ctx: ActorContext,
  peer: Peer,
  json: string,
  redeliver: number | undefined,
): Promise<Lock> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await peer.locks.resume(JSON.parse(json));
    } catch (error) {
      const name = (error as Error | undefined)?.name;
      if (redeliver === undefined || name !== "QuorumError" || attempt >= 3) throw error;
      await ctx.clock.sleep(redeliver);
    }
  }
}

/**
 * Acquire, work, `ticket()`, then deliver the ticket's JSON to `deliveries` instances, each of
 * which resumes it and works in a section of its own. The sender's interval ends when it hands
 * on (it stops working before, as the README asks); a resumer's starts at its grant.
 */
async function handoffOp(ctx: ActorContext, op: OpSpec & { kind: "handoff" }): Promise<void> {
  const { clock, locks } = ctx;
  const key = ctx.keyName(op.key);
  const wait = waitRecord(ctx, key, op.wait);
  let lock: Lock;
  try {
    const got =
      op.wait > 0
        ? await locks.acquire(key, { lease: op.lease, wait: op.wait })
        : await locks.tryAcquire(key, { lease: op.lease });
    if (got === null) return;
    lock = got;
  } catch (error) {
    ended(ctx, wait, error);
    return;
  }
  const record = grantRecord(ctx, key, wait, lock);
  await section(ctx, record, lock, op.hold, undefined);
  record.releaseStart = clock.now();
  let json: string;
  try {
    json = JSON.stringify(await lock.ticket({ lease: op.ticketLease }));
  } catch (error) {
    // Not handed on (lost, or the nodes failed): the sender ends it as usual.
    record.releaseStatus = (await lock.release()).status;
    throw error;
  }
  record.releaseStatus = "handed-on";
  const deliveries = Array.from({ length: op.deliveries }, async (_, d) => {
    const peer = ctx.peers[(op.to + d) % ctx.peers.length] as Peer;
    await clock.sleep(op.delay);
    const receiver = { ...ctx, ...peer, solo: false };
    const resumed = await resumeDelivered(ctx, peer, json, op.redeliver);
    const held = grantRecord(receiver, key, undefined, resumed);
    ctx.observed.resumes?.add(held.id);
    await section(receiver, held, resumed, op.hold, undefined);
    held.releaseStart = clock.now();
    held.releaseStatus = (await resumed.release()).status;
  });
  // Every delivery's own failure is expected or a problem, as for any operation.
  for (const outcome of await Promise.allSettled(deliveries)) {
    if (outcome.status === "rejected") {
      const name = (outcome.reason as Error | undefined)?.name ?? String(outcome.reason);
      if (!EXPECTED.has(name)) {
        const detail = `resume: ${name}: ${(outcome.reason as Error | undefined)?.message}`;
        ctx.observed.problems.push({ kind: "unexpected-error", detail, at: clock.now() });
      }
    }
  }
}

/** A request with an `Idempotency-Key`, then its client's retries (`retries`, `gap` ms apart). */
async function idempotentOp(ctx: ActorContext, op: OpSpec & { kind: "idempotent" }): Promise<void> {
  await idempotentRequest(ctx, op);
  for (let retry = 0; retry < (op.retries ?? 0); retry++) {
    await ctx.clock.sleep(op.gap ?? 0);
    await idempotentRequest(ctx, { ...op, fail: false });
  }
}

/** One request with an `Idempotency-Key` through the idempotency core (as both adapters do). */
async function idempotentRequest(
  ctx: ActorContext,
  op: OpSpec & { kind: "idempotent" },
): Promise<void> {
  const { clock, lib, locks, observed } = ctx;
  const key = `k${op.key}`;
  let run: IdempotentRun | undefined;
  const resolved = lib.resolveIdempotency<undefined>(
    {
      locks,
      lease: op.lease,
      wait: op.wait,
      ttl: 600_000,
      onUnrecorded: () => {
        if (run !== undefined) run.told = true;
      },
      // A 503 is an expected outcome of a faulty schedule: no server log line per request.
      onUnavailable: () => undefined,
    },
    "sim",
  );
  const body = new TextEncoder().encode(`body ${op.body}`);
  const request = {
    context: undefined,
    method: "POST",
    path: "/charge",
    header: (name: string) => (name.toLowerCase() === "idempotency-key" ? `"${key}"` : undefined),
    body: async () => body,
  };
  const outcome = await lib.runIdempotent(resolved, request, async (lock) => {
    const answer = `run ${observed.idempotentRuns.length} of ${key} (i${ctx.instance}/c${ctx.caller})`;
    run = { key, body: op.body, answer, at: clock.now(), fail: op.fail };
    observed.idempotentRuns.push(run);
    await clock.sleep(op.hold);
    const status = op.fail || lock.signal.aborted ? 503 : 200;
    run.status = status;
    run.claimEnd = ctx.toGlobal(lock.validUntil);
    const response = { status, headers: [], body: new TextEncoder().encode(answer) };
    return { result: answer, status, capture: async () => response };
  });
  const at = clock.now();
  const kind = outcome.kind === "problem" ? String(outcome.problem.status) : outcome.kind;
  const replayed =
    outcome.kind === "replay" ? new TextDecoder().decode(outcome.response.body) : undefined;
  observed.idempotentAnswers.push({
    key,
    body: op.body,
    at,
    kind,
    ...(replayed === undefined ? {} : { replayed }),
  });
  if (run !== undefined && outcome.kind === "ran") {
    run.stored = outcome.stored;
    run.endedAt = at;
  }
}

async function acquireOp(ctx: ActorContext, op: OpSpec & { kind: "acquire" }): Promise<void> {
  const { clock, locks } = ctx;
  const key = ctx.keyName(op.key);
  const wait = waitRecord(ctx, key, op.wait);
  const controller = op.abortAfter === undefined ? undefined : new AbortController();
  if (controller !== undefined) {
    void clock.sleep(op.abortAfter ?? 0).then(() => {
      const reason = new Error("aborted by the schedule");
      reason.name = "SimAbort";
      controller.abort(reason);
    });
  }
  // A crashed holder must not keep extending itself: it is gone.
  const autoExtend = op.autoExtend && op.end === "release";
  const options = {
    lease: op.lease,
    autoExtend,
    ...(controller === undefined ? {} : { signal: controller.signal }),
  };
  let lock: Lock;
  try {
    // Without waiting, the way a user would: tryAcquire (null when busy).
    const got =
      op.wait > 0
        ? await locks.acquire(key, { ...options, wait: op.wait })
        : await locks.tryAcquire(key, options);
    if (got === null) return;
    lock = got;
  } catch (error) {
    ended(ctx, wait, error);
    return;
  }
  if (controller?.signal.aborted === true) {
    // Granted although the caller had aborted before the grant: the call should have rejected.
    ctx.observed.problems.push({ kind: "abort-ignored", detail: key, at: clock.now() });
  }
  const record = grantRecord(ctx, key, wait, lock);
  await section(ctx, record, lock, op.hold, op.extend);
  if (op.end === "crash") return;
  const validAtRelease = lock.validUntil;
  const stillHeld = !lock.signal.aborted;
  record.releaseStart = clock.now();
  const { status, outcomes } = await lock.release();
  record.releaseStatus = status;
  // A release sent while valid finds our token on a majority (docs/SAFETY.md, E3). Without
  // auto-extension nothing delays its requests (an auto-extension in flight would).
  const sentWhileValid =
    stillHeld && !autoExtend && ctx.toGlobal(validAtRelease) > record.releaseStart + 1;
  if (status === "expired" && sentWhileValid) {
    const seen = outcomes.map((o) => `${o.index}:${o.status}`).join(",");
    const detail = `${record.id} released while valid (until ${ctx.toGlobal(validAtRelease)}) but reported expired (${seen})`;
    ctx.observed.problems.push({ kind: "release-misreported", detail, at: clock.now() });
  }
}

/**
 * A lock on several keys: one grant record per key (what the checker judges per key), a section
 * on each of them at once under the one lock, and one release for all.
 */
async function multiOp(ctx: ActorContext, op: OpSpec & { kind: "multi" }): Promise<void> {
  const { clock, locks } = ctx;
  const names = op.keys.map((k) => ctx.keyName(k));
  const distinct = [...new Set(names)];
  const wait = waitRecord(
    ctx,
    distinct[0] as string,
    op.wait,
    distinct.length > 1 ? distinct : undefined,
  );
  const options = { lease: op.lease, autoExtend: op.autoExtend };
  let lock: Lock;
  try {
    const got =
      op.wait > 0
        ? await locks.acquire(names, { ...options, wait: op.wait })
        : await locks.tryAcquire(names, options);
    if (got === null) return;
    lock = got;
  } catch (error) {
    ended(ctx, wait, error);
    return;
  }
  const records = lock.keys.map((key) => grantRecord(ctx, key, wait, lock));
  await Promise.all(records.map((record) => section(ctx, record, lock, op.hold, undefined)));
  const releaseStart = clock.now();
  const { status } = await lock.release();
  for (const record of records) {
    record.releaseStart = releaseStart;
    record.releaseStatus = status;
  }
}

function waitRecord(
  ctx: ActorContext,
  key: string,
  wait: number,
  keys?: readonly string[],
): WaitRecord | undefined {
  if (wait <= 0) return undefined;
  const requested = ctx.clock.now();
  const listens = ctx.wake && keys === undefined;
  const record: WaitRecord = {
    instance: ctx.instance,
    key,
    keys,
    listens,
    requested,
    wait,
    rate: ctx.rate,
  };
  ctx.observed.waits.push(record);
  return record;
}

function ended(ctx: ActorContext, wait: WaitRecord | undefined, error: unknown): void {
  if (wait !== undefined && wait.end === undefined) {
    wait.end = ctx.clock.now();
    wait.outcome = (error as Error | undefined)?.name ?? "unknown";
  }
  throw error;
}

function grantRecord(
  ctx: ActorContext,
  key: string,
  wait: WaitRecord | undefined,
  lock: Lock,
): GrantRecord {
  const now = ctx.clock.now();
  const id = `i${ctx.instance}/c${ctx.caller}#${ctx.observed.grants.length}`;
  const record: GrantRecord = {
    id,
    source: "main",
    key,
    requested: wait?.requested ?? now,
    granted: now,
    validEnd: ctx.toGlobal(lock.validUntil),
    fence: lock.fence,
    extended: 0,
    extendFailed: 0,
  };
  if (wait !== undefined) {
    wait.end = now;
    wait.outcome = "granted";
    wait.grant = id;
  }
  lock.signal.addEventListener("abort", () => {
    // A loss, not the end the holder chose (a release also aborts the signal: LockEndedError).
    if ((lock.signal.reason as Error).name === "LockLostError") record.lostAt = ctx.clock.now();
  });
  ctx.observed.grants.push(record);
  ctx.observed.owner.set(id, ctx.instance);
  if (ctx.solo === true) ctx.observed.soloGrants.add(id);
  return record;
}

/** The work under the lock: an optional extension, the non-atomic update, the fenced write. */
async function section(
  ctx: ActorContext,
  record: GrantRecord,
  lock: Lock,
  hold: number,
  extend: number | undefined,
): Promise<void> {
  const { clock, store } = ctx;
  const sync = () => {
    record.validEnd = Math.max(record.validEnd, ctx.toGlobal(lock.validUntil));
  };
  await clock.sleep(Math.floor(hold / 2));
  if (extend !== undefined && !lock.signal.aborted) {
    try {
      await lock.extend(extend);
      record.extended++;
    } catch {
      record.extendFailed++;
    }
  }
  sync();
  // The holder checks its signal before each write (README, guarantee 4).
  if (lock.signal.aborted) {
    record.counter = { state: "abandoned", why: "signal aborted before the read" };
  } else {
    const readAt = clock.now();
    const read = await store.read(record.key);
    if (lock.signal.aborted) {
      record.counter = { state: "abandoned", read, why: "signal aborted before the write" };
    } else {
      await store.write(record.key, read + 1);
      record.counter = { state: "done", read, readAt, ackAt: clock.now() };
    }
  }
  if (lock.fence !== undefined && !lock.signal.aborted) {
    const read = await store.readFenced(record.key);
    const accepted = await store.fencedWrite(record.key, lock.fence, read + 1);
    record.fenced = { state: "done", read, accepted, at: clock.now() };
  }
  await clock.sleep(hold - Math.floor(hold / 2));
  sync();
}
