/**
 * The Lua scripts (acquire, extend, release, fence raise, inspect, force release, complete,
 * handover, leave, pass, record, resume, discard), their SHA-1 literals, argument builders and reply
 * checks, the key triples they take, and the one EVALSHA → NOSCRIPT → EVAL path. The semaphore's
 * scripts live in their own modules (`./semaphore`): a lock-only bundle drops them, as no code it
 * keeps refers to them (`test/size.test.ts` asserts it).
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
export {
  DISCARD_SLOTS,
  RELEASE_SLOTS,
  SEM_ACQUIRE,
  SEM_INSPECT,
  SEM_PASS,
  SEMAPHORE_SCRIPTS,
  type SemAcquireArgs,
  type SemAcquireReply,
  type SemPassArgs,
  type SemPassReply,
  type SlotsEndArgs,
} from "./semaphore";
