import type { Budget } from "../budget/budget";
import { LockBusyError, type LockError, type NodeOutcome } from "../errors";
import type { ResolvedCall } from "../options";
import type { NodeAnswer, Round } from "../quorum/fanout";
import { drift, isValidGrant, validity } from "../quorum/validity";
import { Backoff } from "./backoff";
import type { Keys, LockCore } from "./core";
import { budgetShortfall, cleanup, failureOf, isDone, unheardFailure } from "./failure";
import { type Holds, holdsOf } from "./holds";
import type { LocalHold, LocalLine, NextRound, Offer, Ticket } from "./queue";
import { newToken, random, sleep } from "./timing";
import { type Watch, waiterArgs, waiterEntry } from "./wake";

/** A successful acquisition, before it is wrapped in a `Lock`. */
export interface Grant {
  readonly key: string;
  readonly keys: Keys;
  readonly token: string;
  readonly fence: number | undefined;
  readonly lease: number;
  /** End of validity on the `performance.now()` clock. */
  readonly validUntil: number;
  readonly timeoutMs: number;
  readonly outcomes: readonly NodeOutcome[];
  /**
   * Per node: whether our token may be there (see {@link holdsOf}). Release, handover and extend
   * follow it, so none of them overtakes an acquire request still in flight on a slow node.
   */
  readonly holds: Holds;
  /**
   * This grant in its key's line: `end()` tells the callers of the same `Locks` waiting for the key
   * that it ended (released, completed, lost: the first of them asks at once; idempotent), and
   * `renew()` moves its validity end on extension.
   */
  readonly local: LocalHold;
}

/**
 * One look at the lock with `token`. Without `probeAt`, the acquire round on every node. With it,
 * the acquire script on that node first (one request): only if it granted there are the other
 * nodes asked, and the round then counts from the probe's start (the probed node's TTL runs from
 * there). A probe that did not grant comes back as a round of that one node.
 */
async function look(
  core: LockCore,
  keys: Keys,
  token: string,
  ttl: number,
  timeoutMs: number,
  budget: Budget | undefined,
  probeAt: number | undefined,
  waiter: readonly string[],
): Promise<Round<number>> {
  if (probeAt === undefined) {
    return core.acquireRound(keys, token, ttl, timeoutMs, budget, undefined, waiter);
  }
  const probe = await core.probeRound(probeAt, keys, token, ttl, timeoutMs, budget, waiter);
  if (probe.outcomes[0]?.status !== "ok") return probe;
  const fence = probe.values.get(probeAt) ?? 0;
  const answer: NodeAnswer<number> = { status: "ok", value: fence, fence };
  const known = new Map([[probeAt, answer]]);
  const round = await core.acquireRound(keys, token, ttl, timeoutMs, budget, known, waiter);
  return { ...round, startedAt: probe.startedAt };
}

/** A round a releasing grant of this instance runs for us (see `handoverRound`). */
interface Handed {
  readonly round: Promise<Round<number>>;
  readonly next: NextRound;
}

/**
 * Wait in `line` until `ticket`'s turn (first, nothing held here) or `until`. While first behind a
 * grant held here, stand ready to take over from it: its release then runs our next round, sized
 * by `next()` at that moment; wake at that grant's validity end at the latest. Behind other
 * waiters, wake every `patience` to drop a first waiter whose caller is gone, and join again at
 * the end if this one was dropped itself (it was only slow). Resolves with the handed-over round,
 * or whether the turn came (`false`: the time ran out or `signal` aborted).
 */
async function waitTurn(
  line: LocalLine,
  ticket: Ticket,
  until: number,
  signal: AbortSignal | undefined,
  next: () => NextRound | undefined,
): Promise<Handed | boolean> {
  let sized: NextRound | undefined;
  let taken: Promise<Round<number>> | undefined;
  const offer: Offer = {
    next: () => {
      sized = next();
      return sized;
    },
    accept: (round) => {
      taken = round;
    },
  };
  try {
    for (let now = performance.now(); taken === undefined; now = performance.now()) {
      line.rejoin(ticket);
      line.seen(ticket);
      line.prune(ticket, now);
      if (line.isTurn(ticket, now)) break;
      if (until <= now || signal?.aborted) break;
      let wakeAt: number;
      if (line.isFirst(ticket)) {
        line.offer(ticket, offer);
        wakeAt = Math.min(until, line.heldUntil(now));
      } else {
        wakeAt = Math.min(until, now + ticket.patience);
      }
      await sleep(wakeAt - now, signal, line.changed(ticket));
    }
  } finally {
    line.withdraw(ticket);
  }
  if (taken !== undefined && sized !== undefined) return { round: taken, next: sized };
  return line.isTurn(ticket);
}

/**
 * The acquire loop (DESIGN §3): fresh token per round, one acquire round on all nodes, a fence
 * round when fencing on N > 1, validity check; on failure release everywhere that may have
 * granted, then sleep ({@link Backoff}: holders' PTTL, full jitter, a turnover-aware cap)
 * and retry within `wait` and the budget.
 *
 * While the lock is busy (N > 1), each retry first probes one node (rotating): one request
 * instead of N for every look that finds it still held; the other nodes are asked only once the
 * probe granted. A retry after a wake-up near the holders' expiry, or after a failed probe, asks
 * every node at once.
 *
 * Callers of the same `Locks` instance waiting for the same key line up ({@link LocalLine}): the
 * first waits on the nodes, the others wait for their turn without sending anything, and nobody
 * asks while one of them holds the lock. That grant's release hands the key over to the first in
 * line in the same requests (HANDOVER: release + acquire, one request per node); its completion
 * or loss wakes the first in line to ask at once. A newcomer asks the nodes straight away only
 * when the line is empty.
 *
 * @throws {BudgetExhaustedError} the first round cannot be covered (no node called)
 * @throws {LockBusyError} | {QuorumError} the last look's failure once waiting is over (for a
 *   caller that waited in line without asking: see {@link unheardFailure})
 * @throws the `signal`'s reason when aborted (grants made meanwhile are released)
 */
export async function acquireLoop(core: LockCore, key: string, call: ResolvedCall): Promise<Grant> {
  const { nodes, options } = core;
  const n = nodes.length;
  const keys = core.keys(key);
  const { lease, budget, signal } = call;
  const began = performance.now();
  const waitUntil = began + call.wait;
  // Waiting in line also stops where the budget would leave no more than its reserve.
  const lineUntil =
    budget === undefined ? waitUntil : Math.min(waitUntil, budget.deadline - budget.reserve);
  const roundCost = options.fencing && n > 1 ? 2 * n : n;
  // Longest a live first waiter goes without a sign of life: a retry sleep plus a look (probe,
  // round, fence raise, cleanup: a request timeout each).
  const patience = options.retryDelayMax + 4 * core.timeoutFor(lease);
  // Made at the first failed look: an uncontended acquire needs neither.
  let backoff: Backoff | undefined;
  let rotation: number | undefined;
  let probeAt: number | undefined;
  let lastError: LockError | undefined;
  let lastWhy: string | undefined;
  let line: LocalLine | undefined;
  let ticket: Ticket | undefined;
  // Every look of a waiting caller registers it in the key's wait room (see `wake.ts`), so that
  // releases serve waiters of all instances in order of their calls. With `wake`, from the first
  // busy look on it also listens on one node's channel; otherwise the entry names its longest
  // sleep plus a look (`p<ms>`), how long a release keeps the key for it.
  const pollMs = options.retryDelayMax + core.timeoutFor(lease);
  const listener = options.wake ? core.wake.id : `p${pollMs}`;
  const entry = call.wait > 0 ? waiterEntry(lineUntil - began, listener) : undefined;
  // The room outlives this caller's wait: while listening it may refresh one node only.
  const roomTtl = Math.max(lease, 2 * options.retryDelayMax, Math.ceil(lineUntil - began));
  const waiter = entry === undefined ? [] : waiterArgs(entry, roomTtl);
  let watch: Watch | undefined;
  // The last sleep was a listening one that no wake-up ended (see `Watch.missed`).
  let dozed = false;
  // A look registered this caller in a wait room, and it has not been granted since.
  let registered = false;
  // A round a releasing grant may run for us: sized when it does, as our own would be.
  const sizeNext = (): NextRound | undefined => {
    const ttl = budget === undefined ? lease : budget.ttl(lease);
    if (budget !== undefined && budgetShortfall(core, budget, ttl, roundCost + n) !== undefined) {
      return undefined;
    }
    return { token: newToken(), ttl, timeoutMs: core.timeoutFor(ttl), waiter };
  };

  try {
    for (let attempt = 0; ; attempt++) {
      let handed: Handed | undefined;
      if (call.wait > 0 && (ticket !== undefined || core.lines.peek(keys[0])?.idle === false)) {
        line ??= core.lines.of(keys[0]);
        ticket ??= line.join(patience, entry?.place);
        if (!line.isTurn(ticket)) {
          const waited = await waitTurn(line, ticket, lineUntil, signal, sizeNext);
          if (typeof waited === "boolean") {
            if (signal?.aborted) throw signal.reason;
            if (!waited) throw lastError ?? unheardFailure(core, key, line);
          } else {
            handed = waited;
          }
          // A grant of ours ended or the waiter before us gave up: the lock is likely free.
          probeAt = undefined;
        }
      }
      let next = handed?.next;
      if (next === undefined) {
        const ttl = budget === undefined ? lease : budget.ttl(lease);
        const shortfall =
          budget === undefined ? undefined : budgetShortfall(core, budget, ttl, roundCost + n);
        if (shortfall !== undefined) {
          if (lastError === undefined) throw shortfall;
          throw failureOf(core, key, lastError.outcomes, lastWhy, shortfall);
        }
        next = { token: newToken(), ttl, timeoutMs: core.timeoutFor(ttl) };
      }
      const { token, ttl, timeoutMs } = next;
      const round = await (handed?.round ??
        look(core, keys, token, ttl, timeoutMs, budget, probeAt, waiter));
      const probed = round.outcomes.length < n;
      let outcomes = round.outcomes;
      let why: string | undefined;
      // A done marker on any node that answered means the job of this key finished: never grant
      // it, even when the other nodes would make a majority (its marker may be on a minority only).
      let ok = round.ok && !outcomes.some(isDone);
      let fence: number | undefined;
      if (ok && options.fencing) {
        fence = Math.max(0, ...round.values.values());
        if (n > 1) {
          // Raise every node, not only the granting ones: raising is a max (always safe), it
          // covers a granting node still in flight, and any later majority meets a majority of
          // raised nodes. Success needs a majority of raises.
          const raise = await core.raiseRound(nodes, keys, fence, token, timeoutMs, budget);
          if (!raise.ok) {
            ok = false;
            outcomes = raise.outcomes;
            why = "the fence could not be raised on a majority";
          }
        }
      }
      const durationMs = performance.now() - round.startedAt;
      if (signal?.aborted) {
        // The caller gave up while this round ran: undo whatever it granted.
        await cleanup(core, round, keys, token, timeoutMs, budget);
        throw signal.reason;
      }
      if (ok) {
        const valid = validity(ttl, durationMs, options.driftFactor);
        if (isValidGrant(valid, options.minValidity)) {
          if (dozed) watch?.missed();
          if (entry !== undefined) {
            // Nodes that refused this round (also those answering after the majority) registered
            // us there: leave, or a later release would keep the key for a caller long gone.
            const { member } = entry;
            void round.settled.then((all) => {
              const refused = all.filter((o) => o.status === "held" || o.status === "done");
              const where = refused.map((o) => nodes[o.index]).filter((x) => x !== undefined);
              core.leave(where, keys, member, timeoutMs, budget);
            });
          }
          registered = false;
          core.emit({ type: "acquire", key, attempt, result: "granted", durationMs, outcomes });
          const validUntil = round.startedAt + ttl - drift(ttl, options.driftFactor);
          // Counted as held before leaving the line, so the next in line waits for its end.
          const local = core.lines.of(keys[0]).hold(validUntil);
          const holds = holdsOf(round);
          return { key, keys, token, fence, lease, validUntil, timeoutMs, outcomes, holds, local };
        }
        why ??= `validity ${Math.round(valid)} ms below minValidity after a ${Math.round(durationMs)} ms round`;
      }
      const busy = outcomes.some((o) => o.status === "held" || o.status === "done");
      if (busy && entry !== undefined) registered = true;
      const result = why === undefined && busy ? "busy" : ok ? "invalid" : "unavailable";
      core.emit({ type: "acquire", key, attempt, result, durationMs, outcomes });
      await cleanup(core, round, keys, token, timeoutMs, budget);
      if (signal?.aborted) throw signal.reason;
      // A probe that failed says nothing about the lock: ask every node next, at once.
      const failedProbe = probed && !busy;
      if (!failedProbe || lastError === undefined) {
        lastError = failureOf(core, key, outcomes, why);
        lastWhy = why;
      }
      const now = performance.now();
      if (now >= waitUntil) throw lastError;
      // A done marker is never released early: waiting helps only if it expires within the wait.
      const markers = outcomes.filter(isDone).map((o) => o.pttl ?? -1);
      if (markers.length > 0 && (markers.includes(-1) || Math.max(...markers) > waitUntil - now)) {
        throw lastError;
      }
      const freeIn = lastError instanceof LockBusyError ? lastError.retryAfter : undefined;
      backoff ??= new Backoff(options.retryDelay, options.retryDelayMax);
      if (!failedProbe) backoff.observe(freeIn, now);
      if (options.wake && entry !== undefined && busy && (watch === undefined || watch.failed)) {
        watch?.close();
        watch = listen(core, keys, outcomes, budget, roundCost + n);
      }
      // Listening: a release wakes us, so look again only at the holders' expiry (nobody releases
      // an expired grant) or after `retryDelayMax` (a wake-up that got lost).
      const listening = watch?.ready === true;
      const cap = listening ? options.retryDelayMax : backoff.cap();
      const expiring = freeIn !== undefined && freeIn < cap;
      // A reservation for a woken waiter: it is about to take the key for a lease, so one node
      // will do to see whether it came (if not, the key is free once the reservation ends).
      const handedOn =
        listening &&
        outcomes.some((o) => o.reserved === true) &&
        !outcomes.some((o) => o.status === "held" && o.reserved !== true);
      const budgetLeft = budget === undefined ? Infinity : budget.remaining() - budget.reserve;
      const nap = listening
        ? expiring
          ? Math.max(0, freeIn) + Math.floor(random() * options.retryDelay)
          : cap
        : backoff.next(freeIn);
      const delay = failedProbe ? 0 : Math.min(nap, waitUntil - now, Math.max(0, budgetLeft));
      const stillBusy =
        lastError instanceof LockBusyError && !failedProbe && (!expiring || handedOn);
      if (n > 1 && stillBusy && listening && watch !== undefined) {
        // Keep the registration fresh where the wake-up comes from.
        probeAt = watch.node;
      } else if (n > 1 && stillBusy) {
        // Probe the nodes in turn, from a random one (waiters spread over the nodes).
        rotation = rotation === undefined ? Math.floor(random() * n) : rotation + 1;
        probeAt = rotation % n;
      } else {
        probeAt = undefined;
      }
      // From the first failed look on, wait in line with the other callers of this instance.
      line ??= core.lines.of(keys[0]);
      ticket ??= line.join(patience, entry?.place);
      line.seen(ticket);
      line.last = { outcomes: lastError.outcomes, why: lastWhy };
      let woken = false;
      const changed = line.changed(ticket);
      const released = listening && entry !== undefined ? watch?.woken(entry.member) : undefined;
      const either = released === undefined ? changed : Promise.race([changed, released]);
      await sleep(
        delay,
        signal,
        either.then(() => {
          woken = true;
        }),
      );
      if (signal?.aborted) throw signal.reason;
      // Woken by a change in line (a grant of ours ended) or by a release: ask every node.
      if (woken) probeAt = undefined;
      dozed = listening && !woken && !expiring;
    }
  } finally {
    if (ticket !== undefined) line?.leave(ticket);
    watch?.close();
    // Stopped waiting early (aborted, failed, budget): leave the rooms, so no release keeps the
    // key for this caller. After the wait's end RELEASE skips the entry by itself.
    if (registered && entry !== undefined && performance.now() < lineUntil) {
      core.leave(nodes, keys, entry.member, core.timeoutFor(lease), budget);
    }
  }
}

/**
 * Listen for wake-ups of `keys`' wait room on the first node that reported the key held (where
 * this caller just registered), if the budget leaves room for the stream (one subrequest) beside
 * a round and its cleanup.
 */
function listen(
  core: LockCore,
  keys: Keys,
  outcomes: readonly NodeOutcome[],
  budget: Budget | undefined,
  spare: number,
): Watch | undefined {
  const at = outcomes.find((o) => o.status === "held")?.index;
  const node = at === undefined ? undefined : core.nodes[at];
  if (node === undefined || (budget !== undefined && budget.remainingSubrequests() <= spare)) {
    return undefined;
  }
  const watch = core.wake.watch(node, keys[2]);
  if (watch?.opened === true) budget?.charge(1);
  return watch;
}
