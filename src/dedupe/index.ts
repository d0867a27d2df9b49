/**
 * Scheduled-job dedupe, and the dedupe room's door: {@link once} runs a job at most once per key,
 * with the done marker kept in the lock key itself (re-exported by name from `src/index.ts`); the
 * room's friends (`friends.ts`) serve the scheduled adapters only.
 *
 * @module
 */
export * from "./friends";
export { once } from "./once";
export type { OnceOptions, OnceResult } from "./types";
