/**
 * Scheduled-job dedupe: {@link once} runs a job at most once per key, with the done marker kept
 * in the lock key itself.
 *
 * @module
 */
export { once } from "./once";
export type { OnceOptions, OnceResult } from "./types";
