/**
 * The Lua scripts (acquire, extend, release, fence raise, inspect, force release, complete,
 * handover, leave, record, resume, discard), their SHA-1 literals and reply checks, and the one EVALSHA → NOSCRIPT → EVAL
 * path.
 *
 * @module
 */
export { type EvalOptions, evalScript } from "./eval";
export {
  ACQUIRE,
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
  type RaiseReply,
  RECORD,
  RELEASE,
  RESUME,
  type RecordReply,
  SCRIPTS,
  type Script,
} from "./scripts";
