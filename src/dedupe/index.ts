/**
 * Scheduled-job dedupe, and the dedupe room's door: {@link once} runs a job at most once per key,
 * with the done marker kept in the lock key itself (public, re-exported by name from
 * `src/index.ts`). The friends below serve the scheduled adapters (`src/adapters/workers`,
 * `src/adapters/lambda`), which wrap `once()`; they are not part of the package's API.
 *
 * @module
 */
export { once } from "./once";
// Friends (the scheduled adapters only).
// The `retention` check and the one log line of a skipped occurrence, shared by both adapters.
export { checkRetention, DEFAULT_RETENTION } from "./options";
export { logSkip } from "./skip-log";
export type { OnceOptions, OnceResult } from "./types";
