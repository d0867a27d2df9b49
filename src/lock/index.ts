/**
 * The lock room's door: the only module of `src/lock` that other rooms import
 * (ARCHITECTURE.md, "Rooms and doors"; `test/architecture/imports.test.ts` enforces it).
 *
 * Two halves. The public API — `createLocks()` → acquire / tryAcquire / using / resume / inspect /
 * forceRelease, the `Lock` handle (extend, release, signal, ticket), their types and `DEFAULTS` —
 * is re-exported by name from `src/index.ts`. The friends below serve edgelock's own rooms
 * (`dedupe`, `idempotency`, the adapters, `dev`) and are not part of the package's
 * API: `src/index.ts` never re-exports them.
 *
 * @module
 */

// Friends (edgelock's rooms only).
// A release that resolves once every node answered or timed out: every runtime adapter's end.
// Done markers: `once()` and the Idempotency-Key layer end their lock with COMPLETE.
export {
  complete,
  completePersistently,
  isCompletable,
  owesCompletion,
  releaseSettled,
} from "./handle";
export { checkKey, type LockKey, MAX_KEYS } from "./keyset";
// The manager's core (its nodes and resolved options), for a layer that runs its own rounds.
export { coreOf, createLocks } from "./locks";
export { DEFAULTS } from "./options";
// Jittered sleeps that stop at an abort, shared by the retry loops of the wrappers.
export { random, sleep } from "./timing";
export type {
  AcquireOptions,
  ExtendResult,
  ForceReleaseResult,
  InspectResult,
  Lock,
  LockEvent,
  Locks,
  LocksOptions,
  LockTicket,
  NodeCredentials,
  NodeInput,
  NodeOutcome,
  NodeStatus,
  RedisLike,
  ReleaseResult,
  ResumeOptions,
} from "./types";
// The option checks of every wrapper (`once()`, the adapters, the Idempotency-Key layer), so
// each rejects bad options the same way.
export {
  checkFunction,
  checkKnown,
  checkLocksOption,
  isLocks,
  optionalMs,
  optionalNonNegative,
} from "./validate";
