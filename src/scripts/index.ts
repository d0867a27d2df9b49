/**
 * The Lua scripts (acquire, extend, release, fence raise, inspect, force release, complete,
 * handover, leave, pass, record, resume, discard), their SHA-1 literals, argument builders and reply
 * checks, the key triples they take, and the one EVALSHA → NOSCRIPT → EVAL path. The semaphore's
 * scripts (`./semaphore`) are imported from their own module, so a lock-only bundle never has
 * them; its key names are here.
 *
 * @module
 */
export { type EvalOptions, evalScript, SENT_SCRIPTS } from "./eval";
export {
  type KeyTriple,
  PERMIT_INFIX,
  PERMITS_SUFFIX,
  type SemaphoreKeys,
  scriptKeys,
  semaphoreKeys,
  tombstoneKey,
} from "./keys";
export {
  ACQUIRE,
  type AcquireArgs,
  type AcquireReply,
  type CasReply,
  COMPLETE,
  type CompleteReply,
  DISCARD,
  EXTEND,
  FENCE_RAISE,
  FORCE_RELEASE,
  HANDOVER,
  type HandoverReply,
  INSPECT,
  type InspectReply,
  LEAVE,
  PASS,
  type PassReply,
  type QueueRegistration,
  type RaiseReply,
  RECORD,
  RELEASE,
  RESUME,
  type RecordReply,
  SCRIPTS,
  type Script,
} from "./scripts";
