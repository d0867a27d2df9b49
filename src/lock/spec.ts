import type { Budget } from "../budget";
import type { KeyTriple, QueueRegistration } from "../scripts";

/**
 * A lock's keys as the scripts take them: per lock key (sorted) the key, its fence counter key and
 * its wait room key (flattened by `scriptKeys` where a request is made).
 */
export type Keys = readonly KeyTriple[];

/**
 * A round's token and durations, sized together: a fresh token, the lease it places (or extends
 * to) and each node request's timeout (`LockCore.timeoutFor(ttl)`). Named, so that no call can
 * swap `ttl` and `timeoutMs` unseen.
 */
export interface RoundTerms {
  readonly token: string;
  /** The lease the round places or extends to, in ms. */
  readonly ttl: number;
  /** Each node request's timeout, in ms. */
  readonly timeoutMs: number;
}

/**
 * One round on a lock, as every round function takes it: the lock's keys, the round's terms and
 * the budget its requests are charged to.
 *
 * @example
 * const timeoutMs = core.timeoutFor(ttl);
 * const spec: RoundSpec = { keys, token: newToken(), ttl, timeoutMs, budget };
 * const round = await core.acquireRound(spec);
 */
export interface RoundSpec extends RoundTerms {
  readonly keys: Keys;
  /** Charged one per node request; `undefined`: no budget. */
  readonly budget: Budget | undefined;
}

/**
 * The requests of a round on a grant already made (release, complete, fence raise): its keys,
 * token, request timeout and budget, with no lease of their own.
 */
export type GrantSpec = Omit<RoundSpec, "ttl">;

/**
 * An acquire round's spec: a {@link RoundSpec}, the caller's place (a free key goes to a waiter
 * placed before it first) and, for a waiting call, its queue registration.
 */
export interface AcquireSpec extends RoundSpec {
  /** Epoch ms of the call; `undefined`: placed after every waiter (a caller that does not wait). */
  readonly place?: number | undefined;
  /** Registered in the queues of the nodes that refuse (see `QueuedWait`). */
  readonly queue?: QueueRegistration | undefined;
}
