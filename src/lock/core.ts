import type { Budget } from "../budget";
import type { NodeStatus } from "../errors";
import type { RestNode } from "../node";
import { defaultRequestTimeout, fanOut, type NodeAnswer, type Round, roundTimer } from "../quorum";
import {
  ACQUIRE,
  type AcquireReply,
  type CasReply,
  DISCARD,
  EXTEND,
  evalScript,
  FENCE_RAISE,
  FORCE_RELEASE,
  INSPECT,
  LEAVE,
  PASS,
  type QueueRegistration,
  RELEASE,
  RESUME,
  scriptKeys,
  tombstoneKey,
} from "../scripts";
import { casStatus, type Holds, lateFor, mayHold, NOT_THERE, type Unheard } from "./holds";
import { FENCE_SUFFIX, WAIT_SUFFIX } from "./keyset";
import type { ResolvedOptions } from "./options";
import { ReleaseOrder, type ReleaseWait } from "./order";
import type { AcquireSpec, GrantSpec, Keys, RoundSpec } from "./spec";
import type { LockEvent } from "./types";
import { LocalLines } from "./wait/queue";
import { HandoffStreams } from "./wait/streams";

export type { Keys } from "./spec";

const isOk = (status: NodeStatus): boolean => status === "ok";
/** For release: any answer means our token is gone from that node. */
const answered = (status: NodeStatus): boolean =>
  status === "ok" || status === "absent" || status === "held";

/** Largest N whose rounds share one timer (and signal) among their requests. */
export const SHARED_TIMER_MAX_NODES = 8;

/**
 * An ACQUIRE reply (or HANDOVER's acquire part) as a node's answer in a round.
 *
 * @example
 * acquireAnswer({ granted: false, pttl: 4200 }, false) // { status: "held", pttl: 4200 }
 */
export function acquireAnswer(reply: AcquireReply, fencing: boolean): NodeAnswer<number> {
  if (!reply.granted) {
    const status = reply.done ? "done" : "held";
    return reply.ahead === undefined
      ? { status, pttl: reply.pttl }
      : { status, pttl: reply.pttl, ahead: reply.ahead };
  }
  return fencing ? { status: "ok", value: reply.fence, fence: reply.fence } : { status: "ok" };
}

/** One round's ACQUIRE request, the same for every node: built once per round, not per node. */
interface AcquireRequest {
  readonly keys: readonly string[];
  readonly args: string[];
  readonly lockKeys: readonly string[];
}

/**
 * What every operation of one `Locks` instance shares: the resolved options, the nodes, and one
 * method per script round. Each round is one {@link fanOut}.
 */
export class LockCore {
  declare readonly nodes: readonly RestNode[];
  declare readonly quorum: number;
  /** Our releases in flight per node and key: acquires of ours wait for them. */
  declare readonly order: ReleaseOrder;
  /** Grants held and callers waiting, per lock key, within this instance. */
  readonly lines = new LocalLines();
  /** Hand-off streams of the wait queues, shared by this instance's waiting callers. */
  readonly streams = new HandoffStreams();
  /** Nodes whose last answer rejected the token (see `#watched`). */
  readonly #rejecting = new Set<number>();

  constructor(readonly options: ResolvedOptions) {
    this.nodes = options.nodes;
    this.quorum = options.quorum;
    this.order = new ReleaseOrder(this.nodes.length);
  }

  /** The script keys of a lock on `key` (one key, or several already sorted: see `checkKeys`). */
  keys(key: string | readonly string[]): Keys {
    return (typeof key === "string" ? [key] : key).map((k) => {
      const lock = `${this.options.prefix}${k}`;
      return { lock, fence: `${lock}${FENCE_SUFFIX}`, room: `${lock}${WAIT_SUFFIX}` };
    });
  }

  /**
   * The key of the local line of a lock on `keys` in {@link lines}: one line per set of keys (the
   * release order is per key: `lockKeysOf`). Callers of this instance on overlapping but
   * different sets stand in different lines, and the nodes decide between them; a handover only
   * ever goes to a caller for the very same keys.
   */
  lineKey(keys: Keys): string {
    // JSON of the lock keys: distinct sets never share a line, whatever the keys contain.
    return JSON.stringify(this.lockKeysOf(keys));
  }

  /**
   * The lock keys of a lock on `keys`: the release order is kept per lock key (`ReleaseOrder`), so
   * a release of a set holds up an acquire of any of its keys.
   */
  lockKeysOf(keys: Keys): readonly string[] {
    return keys.map((k) => k.lock);
  }

  /** ACQUIRE's KEYS (with the token's tombstone), ARGV and lock keys for `spec`, once per round. */
  #acquireRequest(spec: AcquireSpec): AcquireRequest {
    const { keys, token, ttl, place, queue } = spec;
    return {
      // The token's tombstone: a request of a round already cleaned up places nothing.
      keys: scriptKeys(keys, tombstoneKey(keys, token)),
      args: ACQUIRE.args({ token, ttl, fencing: this.options.fencing, place, queue }),
      lockKeys: this.lockKeysOf(keys),
    };
  }

  /**
   * Start a round whose requests all have the same deadline with one timer and one `AbortSignal`
   * for all of them (cleared once every request settled), instead of one of each per request. A
   * request sent later than the round's start (after waiting for an earlier one) keeps a timer of
   * its own (`evalScript` ignores the shared signal then). Public for the rounds that live outside
   * this class, in the modules of the few callers that use them (`recordRound`), so that an app
   * that never uses them does not bundle their scripts.
   */
  timed<T>(
    timeoutMs: number,
    start: (signal: AbortSignal | undefined) => Promise<Round<T>>,
  ): Promise<Round<T>> {
    // Every request adds an abort listener to the signal; runtimes warn beyond ten.
    if (this.nodes.length > SHARED_TIMER_MAX_NODES) return this.#watched(start(undefined));
    const timer = roundTimer(timeoutMs);
    const round = start(timer.signal);
    void round.then((r) => r.settled).then(timer.clear);
    return this.#watched(round);
  }

  /**
   * Tell `onEvent` when a node starts rejecting the token (HTTP 401/403), once until it answers
   * again: with a minority misconfigured every acquire still succeeds, and the quorum would lose
   * its fault tolerance without anyone noticing.
   */
  #watched<T>(round: Promise<Round<T>>): Promise<Round<T>> {
    void round
      .then((r) => r.settled)
      .then((outcomes) => {
        for (const o of outcomes) {
          const rejected = o.error?.kind === "auth";
          if (rejected && !this.#rejecting.has(o.index)) {
            this.#rejecting.add(o.index);
            const message = o.error?.message ?? "rejected the token";
            this.emit({ type: "rejected", index: o.index, host: o.host, message });
          } else if (!rejected && o.status !== "pending") {
            this.#rejecting.delete(o.index);
          }
        }
      });
    return round;
  }

  /** Per-node timeout for a round granting `ttl` ms. */
  timeoutFor(ttl: number): number {
    return this.options.requestTimeout ?? defaultRequestTimeout(ttl);
  }

  /** Send an event to the hook; a throwing or rejecting hook never affects the lock. */
  emit(event: LockEvent): void {
    const hook = this.options.onEvent;
    if (hook === undefined) return;
    try {
      const result: unknown = hook(event);
      if (result instanceof Promise) result.catch(() => {});
    } catch {
      // Observability must not break locking.
    }
  }

  /**
   * Acquire round: `ok` (value = fence), `held` (pttl), or `done` (the done marker's pttl). Nodes
   * in `known` already answered (a probe): their answer is taken as is, no request.
   * `spec.queue`: a waiting call's queue registration, if any. `onAnswer` hears every node's
   * answer as it comes, also after the round is decided (what a queued wait counts).
   */
  acquireRound(
    spec: AcquireSpec,
    known?: ReadonlyMap<number, NodeAnswer<number>>,
    onAnswer?: (index: number, answer: NodeAnswer<number>) => void,
  ): Promise<Round<number>> {
    const request = this.#acquireRequest(spec);
    return this.timed(spec.timeoutMs, (signal) =>
      fanOut(
        this.nodes,
        async (node) => {
          const answered = known?.get(node.index);
          if (answered !== undefined) return answered;
          const answer = await this.acquireOn(node, spec, { signal, request });
          onAnswer?.(node.index, answer);
          return answer;
        },
        { quorum: this.quorum, isFor: isOk },
      ),
    );
  }

  /**
   * Pass round (docs/SAFETY.md §2, P4): on every node, give up the key where it holds our token
   * from before this pass, and register the call again under the pass's look number. Decided once
   * a majority answered; a node's answer changes nothing the caller counts.
   */
  passRound(spec: RoundSpec, queue: QueueRegistration): Promise<Round<number>> {
    const { keys, token, timeoutMs, budget } = spec;
    const flat = scriptKeys(keys, tombstoneKey(keys, token));
    const args = PASS.args({ token, queue });
    return this.timed(timeoutMs, (signal) =>
      fanOut(
        this.nodes,
        async (node) => {
          const options = { timeoutMs, budget, spare: this.nodes.length, signal };
          const { passed, pttl } = await evalScript(node, PASS, flat, args, options);
          return { status: passed ? "ok" : "held", pttl, value: pttl };
        },
        { quorum: this.quorum, isFor: answered },
      ),
    );
  }

  /**
   * Probe: the acquire script on the node at `position` only (one request). Grants there when the
   * key is free (the caller then asks the others), else reports the holder's PTTL.
   */
  probeRound(position: number, spec: AcquireSpec): Promise<Round<number>> {
    const node = this.nodes[position] as RestNode;
    const acquire = (only: RestNode) => this.acquireOn(only, spec);
    return this.#watched(fanOut([node], acquire, { quorum: 1, isFor: isOk }));
  }

  /**
   * One node's ACQUIRE of `spec.token` for `spec.ttl` (with the wait room registration, if any),
   * sent once our releases of the key in flight there have ended, or half its timeout passed
   * (`after`, by default read from {@link order} now). `signal`: the round's shared timeout
   * signal, if the request goes out with the round.
   */
  async acquireOn(
    node: RestNode,
    spec: AcquireSpec,
    sending: {
      signal?: AbortSignal | undefined;
      after?: ReleaseWait | undefined;
      request?: AcquireRequest;
    } = {},
  ): Promise<NodeAnswer<number>> {
    const { timeoutMs, budget } = spec;
    const request = sending.request ?? this.#acquireRequest(spec);
    const after =
      "after" in sending ? sending.after : this.order.after(node.index, request.lockKeys);
    const options = { timeoutMs, budget, spare: this.nodes.length, after, signal: sending.signal };
    const reply = await evalScript(node, ACQUIRE, request.keys, request.args, options);
    return acquireAnswer(reply, this.options.fencing);
  }

  /**
   * Fence raise on `nodes`: counters go up to at least `fence`; needs a majority of all nodes
   * where the raise counts (`ok`: the key held `spec.token` or was absent; `held` otherwise, where
   * a grant of another holder may already have drawn its fence below ours: docs/SAFETY.md §5, F2).
   */
  raiseRound(nodes: readonly RestNode[], spec: GrantSpec, fence: number): Promise<Round<number>> {
    const { keys, token, timeoutMs, budget } = spec;
    const flat = scriptKeys(keys);
    const args = FENCE_RAISE.args({ fence, token });
    return this.timed(timeoutMs, (signal) =>
      fanOut(
        nodes,
        async (node) => {
          const options = { timeoutMs, budget, signal };
          const { counts, counter } = await evalScript(node, FENCE_RAISE, flat, args, options);
          return { status: counts ? "ok" : "held", value: counter, fence: counter };
        },
        { quorum: this.quorum, isFor: isOk },
      ),
    );
  }

  /**
   * Extend round: compare-and-PEXPIRE; `ok` extended, `absent` expired (or never granted there,
   * per `holds`: no request), `held` taken over. A node whose acquire is still in flight is
   * extended once that acquire answered.
   */
  extendRound(spec: RoundSpec, holds: Holds): Promise<Round<CasReply>> {
    const { keys, token, ttl, timeoutMs, budget } = spec;
    const flat = scriptKeys(keys);
    const args = EXTEND.args({ token, ttl, holder: keys[0]?.holder });
    const spare = this.nodes.length;
    return this.timed(timeoutMs, (signal) =>
      fanOut(
        this.nodes,
        async (node) => {
          const hold = holds[node.index] ?? true;
          if (hold !== true && !(await mayHold(hold, timeoutMs))) return NOT_THERE;
          // Sent later than the round's start: a timer of its own.
          const shared = hold === true ? signal : undefined;
          const options = { timeoutMs, budget, spare, signal: shared };
          const reply = await evalScript(node, EXTEND, flat, args, options);
          return { status: casStatus(reply), value: reply };
        },
        { quorum: this.quorum, isFor: isOk },
      ),
    );
  }

  /**
   * Resume round (a ticket): on every node, swap the ticket's token for `spec.token` where it is
   * still there, never shortening its expiry, and with fencing increment the fence counter (see
   * `RESUME_LUA`). Values and `fence` are the counters, as in an acquire round, so `judge` decides
   * it like one: fence raise on N > 1, validity from the round's start. `seen.undone` is set when
   * a node holds the ticket's record of failed resumes (one of them may still hold its token).
   */
  resumeRound(
    spec: RoundSpec,
    ticketToken: string,
    seen: { undone: boolean } = { undone: false },
  ): Promise<Round<number>> {
    const { keys, token, ttl, timeoutMs, budget } = spec;
    const args = RESUME.args({ ticketToken, token, ttl, fencing: this.options.fencing });
    // The ticket's record of failed resumes (where their undo writes their tombstones).
    const withVoid = scriptKeys(keys, tombstoneKey(keys, ticketToken));
    return this.timed(timeoutMs, (signal) =>
      fanOut(
        this.nodes,
        async (node) => {
          const options = { timeoutMs, budget, signal };
          const reply = await evalScript(node, RESUME, withVoid, args, options);
          const { cas, fence } = reply;
          if (reply.undone) seen.undone = true;
          const status = casStatus(cas);
          return status === "ok" ? { status, value: fence, fence } : { status, value: fence };
        },
        { quorum: this.quorum, isFor: isOk },
      ),
    );
  }

  /**
   * Release round: compare-and-DEL on `scope.nodes` (default: all). Decided once a majority
   * answered (`ok` deleted, `absent`, `held`), so a slow minority does not slow it; or, with
   * `waitAll`, once every node answered (cleanup after a failed acquire). Each node hands the key
   * to its queue's first live waiter (RELEASE's `serve`), or with `before` (the place of this
   * instance's next waiter) only to one placed before it.
   *
   * `scope.holds` (from {@link holdsOf}) skips nodes our token never reached (reported `absent`,
   * no request), and sends to a node whose acquire is still in flight only after that acquire
   * answered, and only if it may have granted: a release landing first would find nothing, and
   * the acquire would then leave an orphaned grant for its whole TTL.
   *
   * `scope.keepMs` (a queued call's grant) writes the token's tombstone on every node;
   * `scope.unheard` (an acquire or hand-over round's grant) writes it for the round's TTL only on
   * the nodes where a request of the round may still run when the release goes out there (it
   * failed, or had not answered within its wait): that request then places nothing
   * (docs/SAFETY.md §2, L3). Elsewhere the release carries no tombstone key.
   */
  releaseRound(
    spec: GrantSpec,
    scope: {
      nodes?: readonly RestNode[];
      holds?: Holds;
      waitAll?: boolean;
      before?: number | undefined;
      /** A one-shot run's counter lifetime (RELEASE ARGV[3]). */
      counterMs?: number | undefined;
      /** A queued call's grant: its token's tombstone lives this long, ms (docs/SAFETY.md L3). */
      keepMs?: number | undefined;
      /** Where a request of the grant's round may still run: a tombstone there (L3). */
      unheard?: Unheard | undefined;
    } = {},
  ): Promise<Round<CasReply>> {
    const { keys, token, timeoutMs, budget } = spec;
    const { nodes = this.nodes, holds, waitAll = false, before, counterMs, keepMs } = scope;
    const { unheard } = scope;
    const lockKeys = this.lockKeysOf(keys);
    // Built per node as its request goes out: by then `holds` tells whether its acquire answered.
    const send = (node: RestNode, shared: AbortSignal | undefined) => {
      const keep = keepMs ?? lateFor(unheard, holds, node.index);
      const request = {
        keys: scriptKeys(keys, keep === undefined ? undefined : tombstoneKey(keys, token)),
        args: RELEASE.args({ token, before, counterMs, keepMs: keep }),
        timeoutMs,
        budget,
      };
      return this.#release(node, request, shared);
    };
    return this.timed(timeoutMs, (signal) => {
      const round = { lockKeys, holds, timeoutMs, signal };
      return fanOut(nodes, (node) => this.#whereHeld(node, round, send), {
        quorum: Math.min(this.quorum, nodes.length),
        isFor: answered,
        waitAll,
      });
    });
  }

  /**
   * Send what ends a grant on one node, only where the grant's token may be (`holds`): nothing
   * where it never was, and after that node's acquire answered (a request of ours landing first
   * would find nothing). Our later acquires on these keys and this node wait for it (its worst
   * case: waiting for the acquire there, then the request itself). `signal`: the round's shared
   * timeout signal, passed to `send` only when the request goes out at once.
   */
  async #whereHeld(
    node: RestNode,
    round: {
      /** `lockKeysOf(keys)`, once per round. */
      lockKeys: readonly string[];
      holds: Holds | undefined;
      timeoutMs: number;
      signal: AbortSignal | undefined;
    },
    send: (node: RestNode, signal: AbortSignal | undefined) => Promise<NodeAnswer<CasReply>>,
  ): Promise<NodeAnswer<CasReply>> {
    const { lockKeys, holds, timeoutMs, signal } = round;
    const hold = holds?.[node.index] ?? true;
    if (hold === false) return NOT_THERE;
    const ended = this.order.track(node.index, lockKeys, 2 * timeoutMs);
    try {
      if (hold !== true && !(await mayHold(hold, timeoutMs))) return NOT_THERE;
      // Sent later than the round's start: a timer of its own.
      return await send(node, hold === true ? signal : undefined);
    } finally {
      ended();
    }
  }

  /** One node's compare-and-DEL (`request`: RELEASE's keys and arguments, built once per round). */
  async #release(
    node: RestNode,
    request: {
      keys: readonly string[];
      args: string[];
      timeoutMs: number;
      budget: Budget | undefined;
    },
    signal: AbortSignal | undefined,
  ): Promise<NodeAnswer<CasReply>> {
    const { keys, args, timeoutMs, budget } = request;
    let resent = false;
    const onRetry = () => {
      resent = true;
    };
    const options = { timeoutMs, budget, signal, onRetry };
    const reply = await evalScript(node, RELEASE, keys, args, options);
    // "Absent" right after re-sending a request whose connection broke most likely means the
    // first attempt deleted it: report the deletion.
    const status = resent && reply === 0 ? "ok" : casStatus(reply);
    return { status, value: reply };
  }

  /**
   * Discard round: the cleanup of a failed round `spec` (acquire, hand-over) or the undo of a
   * failed resume (`restore`: the ticket's token, put back where our fresh token is). On every
   * node of `scope.nodes` that `scope.holds` says may hold `spec.token` (after its request
   * answered, as for a release), DISCARD deletes the token where it is (or puts `restore` back)
   * and writes its tombstone for the round's `ttl`, so a request of the round that runs later
   * places nothing (docs/SAFETY.md §2, L3). Decided once every node answered or failed; `ok`
   * where the token was.
   */
  discardRound(
    spec: RoundSpec,
    scope: { nodes: readonly RestNode[]; holds?: Holds; restore?: string | undefined },
  ): Promise<Round<CasReply>> {
    const { keys, token, ttl, timeoutMs, budget } = spec;
    const { nodes, holds, restore } = scope;
    const args = DISCARD.args({ token, keepMs: ttl, restore });
    // A resume's undo records `token` in the ticket's record of failed resumes (`RESUME_LUA`).
    const withVoid = scriptKeys(keys, tombstoneKey(keys, restore ?? token));
    const lockKeys = this.lockKeysOf(keys);
    const send = async (node: RestNode, shared: AbortSignal | undefined) => {
      const options = { timeoutMs, budget, signal: shared };
      const reply = await evalScript(node, DISCARD, withVoid, args, options);
      return { status: casStatus(reply), value: reply };
    };
    return this.timed(timeoutMs, (signal) => {
      const round = { lockKeys, holds, timeoutMs, signal };
      return fanOut(nodes, (node) => this.#whereHeld(node, round, send), {
        quorum: Math.min(this.quorum, nodes.length),
        isFor: answered,
        waitAll: true,
      });
    });
  }

  /**
   * Inspect every node: `held` with pttl (-1 = no expiry), `done` (a done marker, with its pttl)
   * or `absent`; fence counter.
   */
  inspectRound(keys: Keys, timeoutMs: number): Promise<Round<number>> {
    const flat = scriptKeys(keys);
    return fanOut(
      this.nodes,
      async (node) => {
        const reply = await evalScript(node, INSPECT, flat, INSPECT.args({}), { timeoutMs });
        const { pttl, fence, kind } = reply;
        if (pttl === -2) return { status: "absent", fence, value: fence };
        const status = kind === "done" ? "done" : "held";
        const answer = { status, pttl, fence, value: fence } as const;
        return kind === "reserved" ? { ...answer, reserved: true } : answer;
      },
      { quorum: this.quorum, isFor: answered, waitAll: true },
    );
  }

  /**
   * Remove the granted call `on.token` from the wait queues of `on.keys` on `nodes`, in the
   * background (a stale record only costs a hand-off to a holder, who already has the lock). Sent
   * only while the budget keeps N requests to spare (a release of another lock of the invocation
   * may need them).
   */
  leave(
    nodes: readonly RestNode[],
    on: Pick<RoundSpec, "keys" | "token" | "timeoutMs" | "budget">,
  ): void {
    const { keys, token, timeoutMs, budget } = on;
    const flat = scriptKeys(keys);
    const args = LEAVE.args({ token });
    for (const node of nodes) {
      if (budget !== undefined && budget.remainingSubrequests() <= this.nodes.length) return;
      void evalScript(node, LEAVE, flat, args, { timeoutMs, budget }).catch(() => {});
    }
  }

  /** Unconditional DEL of the lock key on every node. */
  forceReleaseRound(keys: Keys, timeoutMs: number): Promise<Round<number>> {
    const flat = scriptKeys(keys);
    return fanOut(
      this.nodes,
      async (node) => {
        const args = FORCE_RELEASE.args({});
        const deleted = await evalScript(node, FORCE_RELEASE, flat, args, { timeoutMs });
        return { status: deleted === 1 ? "ok" : "absent", value: deleted };
      },
      { quorum: this.quorum, isFor: answered, waitAll: true },
    );
  }
}
