/**
 * The semaphore's rounds (docs/design/semaphore.md §2, §3): a look (SEM_ACQUIRE), the trim of a
 * granted call's other slots and the end of a call (DISCARD_SLOTS), a permit's release
 * (RELEASE_SLOTS) and the read of every slot (SEM_INSPECT), each one fan-out over the manager's
 * nodes. Our own looks on a node wait for our releases and trims of the semaphore in flight there
 * (the lock's `ReleaseOrder`, keyed by the semaphore's room), as a lock's acquires do.
 *
 * @module
 */
import type { Budget } from "../budget";
import type { LockCore } from "../lock";
import { fanOut, type NodeAnswer, type Round } from "../quorum";
import {
  type CasReply,
  DISCARD_SLOTS,
  evalScript,
  type KeyTriple,
  type QueueRegistration,
  RELEASE_SLOTS,
  SEM_ACQUIRE,
  SEM_INSPECT,
  SEM_PASS,
  type SemAcquireReply,
  type SemaphoreKeys,
  type SemPassReply,
  scriptKeys,
} from "../scripts";

/** A permit call's semaphore: its name, keys and the call's order of slots (its rotation). */
export interface SlotsPlan {
  /** The semaphore's name, as the user gave it (errors, events). */
  readonly name: string;
  readonly keys: SemaphoreKeys;
  /** The slot indices in the call's order, each once: the same in every look of the call. */
  readonly order: readonly number[];
}

/** One look's request (SEM_ACQUIRE's arguments apart from the keys). */
export interface LookSpec {
  /** The call's one token. */
  readonly token: string;
  readonly ttl: number;
  readonly timeoutMs: number;
  readonly budget: Budget | undefined;
  /** The leading slots of the order where the token may be placed (P; 1 when consolidating). */
  readonly eligible: number;
  /** Put this slot first in the order (a consolidating look's target). */
  readonly first?: number | undefined;
  /** The slot preferred while `preferMs` lasts (registered with the call's record). */
  readonly prefer?: number | undefined;
  readonly preferMs?: number | undefined;
  /** Epoch ms of the call (a free slot goes to earlier waiters first); `undefined`: after all. */
  readonly place?: number | undefined;
  /** A waiting call's registration. */
  readonly queue?: QueueRegistration | undefined;
}

const ok = (status: string): boolean => status === "ok";
const answered = (status: string): boolean =>
  status === "ok" || status === "absent" || status === "held";

/** The order of a look: `first` moved to the front, the others as the call's order has them. */
function lookOrder(plan: SlotsPlan, first: number | undefined): number[] {
  if (first === undefined) return [...plan.order];
  return [first, ...plan.order.filter((slot) => slot !== first)];
}

/** The triples of `slots` in that order, then `tombstone` (every slot script's KEYS). */
function slotKeys(keys: SemaphoreKeys, slots: readonly number[], token: string): string[] {
  const triples = slots.map((slot) => keys.slots[slot] as KeyTriple);
  return scriptKeys(triples, keys.tombstone(token));
}

/**
 * A node's SEM_ACQUIRE answer as the fan-out counts it: `ok` names the slot (`value`), `held` is a
 * refusal (`pttl`: the first eligible slot's holder's PTTL, `ahead` its place when it comes
 * before us), `absent` the call's tombstone (the call ended: nothing placed).
 */
function lookAnswer(
  reply: SemAcquireReply,
  eligible: readonly number[],
): NodeAnswer<SemAcquireReply> {
  if (reply.granted) return { status: "ok", value: reply };
  if ("ended" in reply) return { status: "absent", value: reply };
  const pttls = eligible.map((slot) => reply.pttls[slot] ?? -2).filter((p) => p !== -2);
  const pttl = pttls.length === 0 ? -1 : Math.min(...pttls);
  const refusal = { status: "held" as const, pttl, value: reply };
  return reply.ahead === undefined ? refusal : { ...refusal, ahead: reply.ahead };
}

/**
 * One look: SEM_ACQUIRE on every node, `onAnswer` told every answer as it comes (also after the
 * round is decided). The fan-out's decision is "a majority placed or found the token on some
 * slot"; which slot, if any, has a majority is the caller's count (`slotMajority`).
 *
 * @example
 * const round = await lookRound(core, plan, { token, ttl, timeoutMs, budget, eligible: P });
 */
export function lookRound(
  core: LockCore,
  plan: SlotsPlan,
  spec: LookSpec,
  onAnswer?: (index: number, answer: NodeAnswer<SemAcquireReply>) => void,
): Promise<Round<SemAcquireReply>> {
  const { token, ttl, timeoutMs, budget, eligible, prefer, preferMs, place, queue } = spec;
  const slots = lookOrder(plan, spec.first);
  const keys = slotKeys(plan.keys, slots, token);
  const args = SEM_ACQUIRE.args({ token, ttl, slots, eligible, prefer, preferMs, place, queue });
  const room = plan.keys.room;
  const spare = core.nodes.length;
  return core.timed(timeoutMs, (signal) =>
    fanOut(
      core.nodes,
      async (node) => {
        const after = core.order.after(node.index, room);
        const options = { timeoutMs, budget, spare, after, signal };
        const reply = await evalScript(node, SEM_ACQUIRE, keys, args, options);
        const answer = lookAnswer(reply, slots.slice(0, eligible));
        onAnswer?.(node.index, answer);
        return answer;
      },
      { quorum: core.quorum, isFor: ok },
    ),
  );
}

/**
 * The slot that `answers` (node index → reply) name on a majority, or `undefined`. By Lemma S1
 * (docs/SAFETY.md §4c) at most one slot can: each node names one slot at most.
 *
 * @example slotMajority(new Map([[0, { granted: true, slot: 1 }], [2, { granted: true, slot: 1 }]]), 2) // 1
 */
export function slotMajority(
  answers: ReadonlyMap<number, SemAcquireReply>,
  quorum: number,
): number | undefined {
  const counts = new Map<number, number>();
  for (const reply of answers.values()) {
    if (!reply.granted) continue;
    const count = (counts.get(reply.slot) ?? 0) + 1;
    if (count >= quorum) return reply.slot;
    counts.set(reply.slot, count);
  }
  return undefined;
}

/**
 * A pass (docs/design/semaphore.md §3 "Splits across slots"): SEM_PASS on `nodes`, giving up
 * every slot but `keep` where the call's newest look there is older than the pass (P4 per slot),
 * and registering the call again under the pass's look, preferring `keep` for `preferMs`.
 * Decided once a majority of `nodes` answered; an answer changes nothing the caller counts.
 *
 * @example
 * await passRound(core, plan, { token, keep: 1, preferMs: 2_000, queue, timeoutMs, budget }, [2]);
 */
export function passRound(
  core: LockCore,
  plan: SlotsPlan,
  spec: {
    readonly token: string;
    readonly keep: number | undefined;
    readonly preferMs: number;
    readonly queue: QueueRegistration;
    readonly timeoutMs: number;
    readonly budget: Budget | undefined;
  },
  only: readonly number[],
): Promise<Round<SemPassReply>> {
  const { token, keep, preferMs, queue, timeoutMs, budget } = spec;
  const slots = [...plan.order];
  const keys = slotKeys(plan.keys, slots, token);
  const args = SEM_PASS.args({ token, slots, keep, preferMs, queue });
  const nodes = core.nodes.filter((node) => only.includes(node.index));
  return core.timed(timeoutMs, (signal) =>
    fanOut(
      nodes,
      async (node) => {
        const options = { timeoutMs, budget, spare: core.nodes.length, signal };
        const reply = await evalScript(node, SEM_PASS, keys, args, options);
        return { status: reply.passed ? "ok" : "absent", value: reply };
      },
      { quorum: Math.min(core.quorum, nodes.length), isFor: answered },
    ),
  );
}

/** What ends a call's token on some slots (the trim, a give-up) or on all of them (a release). */
export interface EndSpec {
  readonly token: string;
  /** The slots given to the script (all P, or all but the permit's slot for the trim). */
  readonly slots: readonly number[];
  /** How long the call's tombstone lives, ms: at least the call's TTL (L3). */
  readonly keepMs: number;
  readonly timeoutMs: number;
  readonly budget: Budget | undefined;
}

/**
 * DISCARD_SLOTS or RELEASE_SLOTS on `nodes`: each deletes the token from the slots given, hands
 * each slot it frees to the room's first waiter (P3) and writes the call's tombstone (L3). A node
 * whose look may still be in flight needs no waiting: a look that runs after the tombstone places
 * nothing. Our next looks on each node wait for it (`ReleaseOrder`). `waitAll`: decided once every
 * node answered (a trim, a give-up); else once a majority did (a release).
 *
 * @example
 * await endRound(core, plan, { token, slots: [0, 2], keepMs: ttl, timeoutMs, budget }, { nodes, release: false });
 */
export function endRound(
  core: LockCore,
  plan: SlotsPlan,
  spec: EndSpec,
  scope: { nodes?: readonly number[]; release: boolean },
): Promise<Round<CasReply>> {
  const { token, slots, keepMs, timeoutMs, budget } = spec;
  const script = scope.release ? RELEASE_SLOTS : DISCARD_SLOTS;
  const keys = slotKeys(plan.keys, slots, token);
  const args = script.args({ token, slots, keepMs });
  const nodes =
    scope.nodes === undefined
      ? core.nodes
      : core.nodes.filter((node) => scope.nodes?.includes(node.index));
  const room = plan.keys.room;
  return core.timed(timeoutMs, (signal) =>
    fanOut(
      nodes,
      async (node) => {
        const ended = core.order.track(node.index, room, 2 * timeoutMs);
        try {
          const reply = await evalScript(node, script, keys, args, { timeoutMs, budget, signal });
          return { status: reply === 1 ? "ok" : "absent", value: reply };
        } finally {
          ended();
        }
      },
      { quorum: Math.min(core.quorum, nodes.length), isFor: answered, waitAll: !scope.release },
    ),
  );
}

/**
 * Every slot's PTTL on every node (SEM_INSPECT: -2 free, -1 no expiry), slot order; decided once
 * every node answered or failed.
 *
 * @example
 * const round = await inspectRound(core, keys, 1_000); // round.values.get(0) → [1200, -2, 880]
 */
export function inspectRound(
  core: LockCore,
  keys: SemaphoreKeys,
  timeoutMs: number,
): Promise<Round<readonly number[]>> {
  const flat = scriptKeys(keys.slots);
  return fanOut(
    core.nodes,
    async (node) => {
      const pttls = await evalScript(node, SEM_INSPECT, flat, SEM_INSPECT.args({}), { timeoutMs });
      return { status: "ok", value: pttls };
    },
    { quorum: core.quorum, isFor: answered, waitAll: true },
  );
}
