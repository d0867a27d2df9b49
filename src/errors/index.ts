/**
 * The errors room's door: the typed errors and their guards (public, re-exported by name from
 * `src/index.ts`), and the words for node outcomes that the other rooms put in their messages
 * (`report.ts`: for edgelock's own rooms, not part of the package's API).
 *
 * @module
 */
export {
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
export {
  configurationFault,
  describeNodes,
  isRejected,
  isUnanswered,
  nodeName,
  reasonOf,
} from "./report";
