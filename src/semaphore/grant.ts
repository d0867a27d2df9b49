/**
 * A permit's grant (docs/SAFETY.md §4c "What the client steps keep"): the lock's `Grant` over
 * slot j's key, ended by RELEASE_SLOTS over every slot with the call's tombstone (L3 for every
 * permit), after the trim of the other slots on every node not counted for j.
 *
 * @module
 */
import type { Budget } from "../budget";
import type { NodeOutcome } from "../errors";
import type { Grant, LockCore } from "../lock";
import { PERMIT_INFIX } from "../scripts";
import { endRound, type SlotsPlan } from "./rounds";

/** A permit granted: the lock's grant over the slot's key, and the slot. */
export interface PermitGrant {
  readonly grant: Grant;
  readonly slot: number;
}

/** A permit decided: its slot, token, validity and the terms of its call's last look. */
export interface PermitWon {
  readonly slot: number;
  readonly token: string;
  /** End of validity on the `performance.now()` clock. */
  readonly validUntil: number;
  readonly lease: number;
  readonly timeoutMs: number;
  readonly outcomes: readonly NodeOutcome[];
  /** How long the call's tombstone lives, ms: the longest TTL any request of the call set. */
  readonly keepMs: number;
  /** The validity comes from a hand-off (it lasts `handMs`): the handle extends halfway. */
  readonly short: boolean;
}

/**
 * Trim (design §2c): DISCARD_SLOTS with every slot but `won.slot`, and the tombstone, on each node
 * of `nodes` for which `needed(index)` resolves true (it waits for the node's look to answer: a
 * look still in flight may place the token on another slot, or name `won.slot` after all). Slot j
 * is never given, so E2 for j stands. Charged to the call's `budget`, whose looks leave room for it
 * ({@link trimReserve}). Never rejects.
 *
 * @example
 * const trimmed = trim(core, plan, won, all, async (i) => !named(await round.each[i]));
 */
export function trim(
  core: LockCore,
  plan: SlotsPlan,
  won: Pick<PermitWon, "slot" | "token" | "keepMs" | "timeoutMs"> & { budget?: Budget | undefined },
  nodes: readonly number[],
  needed: (index: number) => Promise<boolean> = () => Promise.resolve(true),
): Promise<void> {
  const { slot, token, keepMs, timeoutMs, budget } = won;
  const slots = plan.order.filter((s) => s !== slot);
  if (slots.length === 0) return Promise.resolve();
  const spec = { token, slots, keepMs, timeoutMs, budget };
  const each = nodes.map(async (index) => {
    if (!(await needed(index))) return;
    const ended = await endRound(core, plan, spec, { nodes: [index], release: false });
    await ended.settled;
  });
  return Promise.all(each).then(
    () => undefined,
    () => undefined,
  );
}

/**
 * Subrequests a permit call leaves over beyond its look and its release, on `n` nodes with quorum
 * `quorum`: its trim reaches at most the nodes not counted for the slot.
 *
 * @example
 * budgetShortfall(core, budget, { ttl, requests: 2 * n + trimReserve(n, core.quorum) });
 */
export const trimReserve = (n: number, quorum: number): number => n - quorum;

/**
 * The lock's grant for permit `won` (`trimmed`: its trim, which a settled release waits for).
 *
 * @example
 * return new LockHandle(core, permitGrant(core, plan, won, trimmed), budget, autoExtend);
 */
export function permitGrant(
  core: LockCore,
  plan: SlotsPlan,
  won: PermitWon,
  trimmed: Promise<void>,
): Grant {
  const { slot, token, validUntil, lease, timeoutMs, outcomes, keepMs } = won;
  const all = plan.keys.slots.map((_, s) => s);
  return {
    key: plan.name,
    subject: "semaphore",
    names: [`${plan.name}${PERMIT_INFIX}${slot}`],
    keys: [plan.keys.slots[slot] as Grant["keys"][number]],
    token,
    fence: undefined,
    lease,
    validUntil,
    timeoutMs,
    outcomes,
    // Any node may hold the token (on some slot): the release asks them all, over every slot.
    holds: core.nodes.map(() => true),
    local: { end: () => {}, renew: () => {} },
    ...(won.short ? { short: true as const } : {}),
    release: async ({ budget }) => {
      const spec = { token, slots: all, keepMs, timeoutMs, budget };
      const released = await endRound(core, plan, spec, { release: true });
      const settled = Promise.all([trimmed, released.settled]).then(([, s]) => s);
      return { ...released, settled };
    },
  };
}
