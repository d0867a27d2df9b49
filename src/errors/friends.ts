/**
 * The friends of the errors room: what edgelock's own rooms use beyond the public errors and
 * guards. Re-exported by the room's door (`index.ts`); `src/index.ts` re-exports the door by name,
 * so none of this is part of the package's API.
 *
 * @module
 */

// The option checks every entry point shares: a `ConfigurationError` naming the option.
export {
  checkFunction,
  checkKnown,
  checkOptionsWithLocks,
  isPlainObject,
  optionalMs,
  optionalNonNegative,
  shown,
} from "./checks";
// The words for node outcomes that errors, events and the CLI put in their messages.
export {
  configurationFault,
  describeNodes,
  isFailed,
  isGone,
  isRejected,
  isUnanswered,
  nodeName,
  reasonOf,
  withFix,
} from "./report";
