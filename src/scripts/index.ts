/**
 * The Lua scripts (acquire, extend, release, fence raise, inspect, force release, complete,
 * handover, leave, pass, record, resume, discard), their SHA-1 literals, argument builders and reply
 * checks, the key triples they take, and the one EVALSHA → NOSCRIPT → EVAL path.
 *
 * @module
 */
export { type EvalOptions, evalScript } from "./eval";
export { type KeyTriple, scriptKeys, tombstoneKey } from "./keys";
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
