/**
 * edgelock: distributed locks for serverless and edge functions. A Redlock quorum over
 * Upstash-compatible REST Redis databases, with every lock's TTL sized from the invocation's
 * execution budget.
 *
 * @module
 */
export {
  type Budget,
  type BudgetOptions,
  budget,
  type LambdaContextLike,
  type WorkersFetchBudgetOptions,
  type WorkersScheduledBudgetOptions,
} from "./budget";
export { type OnceOptions, type OnceResult, once } from "./dedupe";
export {
  BudgetExhaustedError,
  ConfigurationError,
  type ConfigurationErrorOptions,
  type ErrorSubject,
  isBudgetExhaustedError,
  isConfigurationError,
  isLockBusyError,
  isLockEndedError,
  isLockError,
  isLockLostError,
  isQuorumError,
  isSemaphoreBusyError,
  isTransportError,
  LockBusyError,
  type LockBusyErrorOptions,
  type LockEnd,
  LockEndedError,
  LockError,
  type LockErrorOptions,
  LockLostError,
  QuorumError,
  SemaphoreBusyError,
  type SemaphoreBusyErrorOptions,
  TransportError,
  type TransportErrorKind,
} from "./errors";
export {
  type AcquireOptions,
  createLocks,
  DEFAULTS,
  type ExtendResult,
  type ForceReleaseResult,
  type InspectResult,
  type Lock,
  type LockEvent,
  type LockKey,
  type Locks,
  type LocksOptions,
  type LockTicket,
  MAX_KEYS,
  type NodeCredentials,
  type NodeInput,
  type NodeOutcome,
  type NodeStatus,
  type RedisLike,
  type ReleaseOptions,
  type ReleaseResult,
  type ResumeOptions,
} from "./lock";
export { type NodesEnv, nodesFromEnv } from "./node";
export {
  MAX_PERMITS,
  type Permit,
  type Semaphore,
  type SemaphoreInspection,
  type SemaphoreOptions,
  semaphore,
} from "./semaphore";
