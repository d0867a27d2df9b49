/**
 * The one fan-out primitive (early majority, per-node outcomes) and the pure timing math:
 * quorum size, drift, validity, default per-node timeout.
 *
 * @module
 */
export {
  type FanOutNode,
  type FanOutOptions,
  fanOut,
  type NodeAnswer,
  type Round,
} from "./fanout";
export {
  defaultRequestTimeout,
  REQUEST_TIMEOUT_FACTOR,
  REQUEST_TIMEOUT_FLOOR,
  roundTimer,
} from "./timeout";
export { bestValidity, drift, freeAfter, isValidGrant, quorumOf, validity } from "./validity";
