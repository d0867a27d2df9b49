/**
 * The lock API: `createLocks()` → acquire / tryAcquire / using / inspect / forceRelease, and the
 * `Lock` handle (extend, release, signal).
 *
 * @module
 */
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
  NodeCredentials,
  NodeInput,
  NodeOutcome,
  NodeStatus,
  RedisLike,
  ReleaseResult,
} from "./types";
