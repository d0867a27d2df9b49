/**
 * `edgelock/workers`: helpers for Cloudflare Workers. `nodesFromEnv(env)` turns the Worker's
 * secrets into the `nodes` option of `createLocks`; `dedupeScheduled(handler, options)` runs a
 * Cron Trigger at most once per scheduled time.
 *
 * @module
 */
export { type NodesEnv, nodesFromEnv } from "../../node";
export { dedupeScheduled } from "./scheduled";
export type {
  DedupedScheduledHandler,
  DedupeScheduledCommon,
  DedupeScheduledOptions,
  ScheduledControllerLike,
  ScheduledHandler,
  ScheduledSkip,
} from "./scheduled-types";
