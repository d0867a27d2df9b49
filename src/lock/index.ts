/**
 * The lock room's door: the only module of `src/lock` that other rooms import
 * (ARCHITECTURE.md "Rooms and doors"; `test/architecture/imports.test.ts` enforces it).
 *
 * The public API — `createLocks()` → acquire / tryAcquire / using / resume / inspect /
 * forceRelease, the `Lock` handle (extend, release, signal, ticket), their types and `DEFAULTS` —
 * which `src/index.ts` re-exports by name; and the room's friends (`friends.ts`), for edgelock's
 * own rooms only.
 *
 * @module
 */
export * from "./friends";
export { type LockKey, MAX_KEYS } from "./keyset";
export { createLocks } from "./locks";
export { DEFAULTS } from "./options";
export * from "./slot-friends";
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
  ReleaseOptions,
  ReleaseResult,
  ResumeOptions,
} from "./types";
