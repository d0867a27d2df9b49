/**
 * The lock API: `createLocks()` → acquire / tryAcquire / using / resume / inspect / forceRelease,
 * and the `Lock` handle (extend, release, signal, ticket).
 *
 * @module
 */
export { type LockKey, MAX_KEYS } from "./keyset";
export { createLocks } from "./locks";
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
