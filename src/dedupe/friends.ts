/**
 * The friends of the dedupe room: what the two scheduled adapters (`src/adapters/workers`,
 * `src/adapters/lambda`), which wrap `once()`, share beyond its public API — the `retention`
 * check and the one log line of a skipped occurrence. Re-exported by the room's door
 * (`index.ts`); not part of the package's API.
 *
 * @module
 */
export { checkRetention } from "./options";
export { logSkip } from "./skip-log";
