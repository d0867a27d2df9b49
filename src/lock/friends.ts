/**
 * The friends of the lock room: what edgelock's own rooms (`dedupe`, `idempotency`, the adapters,
 * `dev`) use from `src/lock` beyond the public API. Re-exported by the room's door (`index.ts`);
 * `src/index.ts` re-exports the door by name, so none of this is part of the package's API.
 *
 * @module
 */

// Done markers: `once()` and the Idempotency-Key layer end their lock with COMPLETE (a lock they
// will complete refuses `ticket()`). The release every runtime adapter ends with is public:
// `lock.release({ settled: true })`.
export { complete, completePersistently, isCompletable, owesCompletion } from "./handle";
// The key rules of `createLocks`: the CLI checks the keys it is given the same way.
export { checkKey } from "./keyset";
// The manager's core (its nodes and resolved options), for a layer that runs its own rounds; a
// wrapper's `lease` checked against a fixed manager when the wrapper is built.
export { checkLeaseWith, coreOf } from "./locks";
// The Idempotency-Key layer's read of a key's done marker and record (RECORD), kept out of
// `LockCore` so that an app without that layer does not bundle the script.
export { recordRound } from "./record";
// Jittered sleeps that stop at an abort, shared by the retry loops of the wrappers.
export { random, sleep } from "./timing";
// The check of a `locks` option, for the wrappers (`once()`, the adapters, the Idempotency-Key
// layer); the other option checks are the errors room's friends.
export { checkLocksOption, isLocks } from "./validate";
// The queued wait's loop (refreshes, patience, give-up), which the semaphore's wait runs with
// its own side; the hand-off TTL its registrations carry.
export { handMsFor, type Queued, QueuedWait, type QueuePlan } from "./wait/queued";
// What a kind of queued call brings to that loop: its looks, passes, count and failures.
export type { QueueActs, QueuePass, QueueRequest, QueueRound, QueueSide } from "./wait/side";
// A hand-off message as the streams route it (a semaphore's names its slot).
export type { Handoff } from "./wait/streams";
// The lock's count of placements and hand-offs: the semaphore keeps one per slot (`SlotTally`).
export { type Counting, Tally } from "./wait/tally";
