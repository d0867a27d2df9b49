import { ConfigurationError, checkKnown, isLockBusyError } from "../errors";
import { freeAfter } from "../quorum";
import { acquireLoop } from "./acquire";
import { LockCore } from "./core";
import type { Grant } from "./grant";
import { LockHandle } from "./handle";
import { checkKey, checkKeys, type LockKey } from "./keyset";
import {
  checkReach,
  lookOnce,
  type ResolvedCall,
  type ResolvedOptions,
  resolveCall,
  resolveOptions,
} from "./options";
import { checkTicket, resumeGrant } from "./resume";
import { abortable } from "./timing";
import type {
  AcquireOptions,
  ForceReleaseResult,
  InspectResult,
  Lock,
  Locks,
  LocksOptions,
} from "./types";

/** Options of `locks.resume()`: the lease is the ticket's. */
const RESUME_OPTIONS: ReadonlySet<string> = new Set(["budget", "autoExtend"]);

/** Per-node timeout of inspect / force release, which grant nothing. */
const ADMIN_TIMEOUT_FLOOR = 1_000;

/**
 * Create a lock manager over one or more independent Upstash-compatible REST Redis databases.
 * With N > 1 nodes it is a Redlock quorum of ⌊N/2⌋ + 1; with one node a plain single-instance
 * lock. Options are validated here (`ConfigurationError` names the option).
 *
 * Defaults: `prefix` "lock:", `lease` 10000 ms, `fencing` false, `driftFactor` 0.01,
 * `minValidity` 10 ms, `wait` 0 ms, `retryDelay` 50 ms, `retryDelayMax` 1000 ms, `requestTimeout`
 * `max(250, round(lease × 0.05))` capped at `⌊lease / 3⌋`.
 *
 * An uncontended acquire + release costs exactly 2N node requests (3N with fencing on N > 1).
 * Under contention, callers of the same `Locks` that wait for the same key line up in the order
 * of their calls: only the first asks the nodes, nobody asks while one of them holds the lock, and
 * its release hands the key over to the next in line in the same N requests. Waiting for another
 * client's grant, retries probe one node at a time (N > 1) until the lock looks free. Create one
 * `Locks` per process or isolate (per set of nodes) and share it.
 *
 * @throws {ConfigurationError} invalid options
 * @example
 * import { Redis } from "@upstash/redis/cloudflare";
 * const locks = createLocks({ nodes: [{ url: u1, token: t1 }, { url: u2, token: t2 }, { url: u3, token: t3 }] });
 * await locks.using("invoice:42", async (lock) => {
 *   await charge(invoice, { signal: lock.signal });
 * }, { wait: 2_000, budget: budget.within(25_000) });
 */
export function createLocks(options: LocksOptions): Locks {
  const resolved = resolveOptions(options);
  const core = new LockCore(resolved);
  const locks = buildLocks(resolved, core);
  CORES.set(locks, core);
  return locks;
}

/** The core of each manager `createLocks` built, for the internal rounds of other layers. */
const CORES = new WeakMap<Locks, LockCore>();

/**
 * The `LockCore` behind `locks` (idempotency reads records through it), or `undefined` for a
 * `Locks` not built by `createLocks`.
 */
export const coreOf = (locks: Locks): LockCore | undefined => CORES.get(locks);

/**
 * A wrapper's `lease`, checked when the wrapper is built against a fixed manager, as `acquire()`
 * checks it per call: one too short to reach `minValidity` fails there, not on every request.
 * With a function for `locks` the manager comes per request, and the call's own check applies.
 *
 * @throws {ConfigurationError} `lease`
 * @example
 * checkLeaseWith(options.locks, optionalMs("lease", options.lease, 1)); // lease: 1 → throws
 */
export function checkLeaseWith(locks: unknown, lease: number | undefined): void {
  const core = lease === undefined ? undefined : CORES.get(locks as Locks);
  if (core !== undefined)
    checkReach(lease as number, core.options.driftFactor, core.options.minValidity);
}

function buildLocks(resolved: ResolvedOptions, core: LockCore): Locks {
  // Most calls pass no options: those resolve the same way every time, so once (per default of
  // autoExtend) rather than per call.
  const plainCalls: ResolvedCall[] = [];
  const callOf = (
    opts: AcquireOptions | undefined,
    autoExtendDefault: boolean,
    waitDefault: number,
  ): ResolvedCall => {
    if (opts !== undefined || waitDefault !== resolved.wait) {
      return resolveCall(resolved, opts, autoExtendDefault, waitDefault);
    }
    const at = autoExtendDefault ? 1 : 0;
    plainCalls[at] ??= resolveCall(resolved, undefined, autoExtendDefault, waitDefault);
    return plainCalls[at];
  };
  const acquire = async (
    key: LockKey,
    opts: AcquireOptions | undefined,
    autoExtendDefault: boolean,
    waitDefault = resolved.wait,
  ): Promise<Lock> => {
    const target = checkKeys(key, resolved.fencing);
    const call = callOf(opts, autoExtendDefault, waitDefault);
    call.signal?.throwIfAborted();
    const release = (grant: Grant) => {
      const { keys, token, timeoutMs, holds, closes, unheard } = grant;
      const scope = { holds, keepMs: closes, unheard };
      void core
        .releaseRound({ keys, token, timeoutMs, budget: call.budget }, scope)
        .catch(() => {});
      grant.local.end();
    };
    const grant = await abortable(acquireLoop(core, target, call), call.signal, release);
    return new LockHandle(core, grant, call.budget, call.autoExtend);
  };

  return {
    acquire: (key, opts) => acquire(key, opts, false),

    async tryAcquire(key, opts) {
      const once = lookOnce(opts) as AcquireOptions;
      try {
        return await acquire(key, once, false);
      } catch (error) {
        if (isLockBusyError(error)) return null;
        throw error;
      }
    },

    async using(key, fn, opts) {
      checkKeys(key, resolved.fencing);
      if (typeof fn !== "function") {
        throw new ConfigurationError("fn", "expected a function (lock) => result");
      }
      // A job that should run: wait for a busy key by default, as redlock and redsync do.
      const lock = await acquire(key, opts, true, resolved.usingWait);
      try {
        return await fn(lock);
      } finally {
        // release() never throws; the guard keeps fn's own error from ever being masked.
        await lock.release().catch(() => {});
      }
    },

    async resume(ticket, opts) {
      const checked = checkTicket(ticket, core);
      const o = opts === undefined ? {} : opts;
      checkKnown(o, RESUME_OPTIONS, "resume() (it takes budget, autoExtend)");
      const call = resolveCall(resolved, { ...o, lease: checked.ticket.lease }, false, 0);
      const grant = await resumeGrant(core, checked, call.budget);
      return new LockHandle(core, grant, call.budget, call.autoExtend);
    },

    async inspect(key): Promise<InspectResult> {
      checkKey(key, false);
      const timeout = resolved.requestTimeout ?? ADMIN_TIMEOUT_FLOOR;
      const round = await core.inspectRound(core.keys(key), timeout);
      const nodes = await round.settled;
      const held = nodes.filter((o) => o.status === "held");
      const absent = nodes.filter((o) => o.status === "absent").length;
      const isHeld = held.length >= core.quorum;
      return {
        key,
        held: isHeld,
        done: nodes.filter((o) => o.status === "done").length >= core.quorum,
        retryAfter: isHeld
          ? freeAfter(
              held.map((o) => o.pttl ?? -1),
              absent,
              core.quorum,
            )
          : undefined,
        fence: Math.max(0, ...nodes.map((o) => o.fence ?? 0)),
        nodes,
      };
    },

    async forceRelease(key): Promise<ForceReleaseResult> {
      checkKey(key, false);
      const timeout = resolved.requestTimeout ?? ADMIN_TIMEOUT_FLOOR;
      const round = await core.forceReleaseRound(core.keys(key), timeout);
      const outcomes = await round.settled;
      return { deleted: outcomes.filter((o) => o.status === "ok").length, outcomes };
    },
  };
}
