/**
 * The errors room's door: the typed errors and their guards (public, re-exported by name from
 * `src/index.ts`), and the room's friends (`friends.ts`: the words for node outcomes, the shared
 * option checks), for edgelock's own rooms only.
 *
 * @module
 */

export {
  type ErrorSubject,
  LockError,
  type LockErrorOptions,
  type NodeOutcome,
  type NodeStatus,
  TransportError,
  type TransportErrorKind,
} from "./base";
export {
  BudgetExhaustedError,
  ConfigurationError,
  type ConfigurationErrorOptions,
  isBudgetExhaustedError,
  isConfigurationError,
  isLockBusyError,
  isLockEndedError,
  isLockError,
  isLockLostError,
  isQuorumError,
  isTransportError,
  LockBusyError,
  type LockBusyErrorOptions,
  type LockEnd,
  LockEndedError,
  LockLostError,
  QuorumError,
} from "./errors";
export * from "./friends";
export {
  isSemaphoreBusyError,
  SemaphoreBusyError,
  type SemaphoreBusyErrorOptions,
} from "./semaphore";
