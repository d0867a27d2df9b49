import type { NodeOutcome } from "../errors";
import type { Round } from "../quorum";
import type { CasReply } from "../scripts";
import type { Keys } from "./core";
import type { Holds, Unheard } from "./holds";
import type { GrantSpec } from "./spec";
import type { LocalHold } from "./wait/queue";

/**
 * A successful acquisition, before it is wrapped in a `Lock`: an acquire round's (`grantOf` in
 * `acquire.ts`), a hand-over's or resume's, or a queued call's (`queued-grant.ts`).
 *
 * @example
 * const lock = new LockHandle(core, grant, call.budget, call.autoExtend);
 */
export interface Grant {
  /** The lock's name (its key, or its keys joined: see {@link KeySet}). */
  readonly key: string;
  /** A permit's grant names its semaphore in its errors (`key` is the semaphore's name). */
  readonly subject?: "semaphore";
  /** The keys as the user gave them (sorted, without duplicates; without the prefix). */
  readonly names: readonly string[];
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
  /**
   * The validity comes from a hand-off (the queue, P3): it lasts the hand-off TTL, not the lease.
   * The handle extends it to the lease halfway through, with or without auto-extension.
   */
  readonly short?: true;
  /**
   * A queued call's grant (one token for all its looks): its release writes the token's
   * tombstone for this many ms, so a look of the call that runs late places nothing (L3), and it
   * is released to the nodes, never handed over in the same requests.
   */
  readonly closes?: number;
  /**
   * An acquire or hand-over round's grant: where a request of its round may still run (it failed
   * on the client, or has not answered), its release writes the token's tombstone for the
   * round's TTL, so that request places nothing after the release (docs/SAFETY.md §2, L3); one
   * whose request already failed somewhere is released to the nodes, never handed over. A round
   * every node answered pays nothing.
   */
  readonly unheard?: Unheard;
  /**
   * A grant that another room ends with its own round instead of RELEASE on `keys`: a
   * semaphore's permit, released by RELEASE_SLOTS over every slot with its call's tombstone
   * (docs/SAFETY.md §4c). Never handed over to a caller of this instance.
   */
  readonly release?: (spec: GrantSpec) => Promise<Round<CasReply>>;
}
