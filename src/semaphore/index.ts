/**
 * The semaphore room's door (ARCHITECTURE.md "Rooms and doors"): a counting semaphore on a quorum
 * (docs/design/semaphore.md, docs/SAFETY.md §4c): `semaphore(locks, key, { permits })`, its
 * permits, and the waiter's per-slot count. `src/index.ts` re-exports `semaphore`, its types and
 * `MAX_PERMITS`; the rest is for the adapters and the tests.
 *
 * @module
 */

export type { Permit } from "./permit";
export {
  checkPermits,
  MAX_PERMITS,
  type Semaphore,
  type SemaphoreInspection,
  type SemaphoreOptions,
  semaphore,
} from "./semaphore";
export {
  type SlotCounter,
  type SlotCounting,
  type SlotDecision,
  type SlotPass,
  SlotTally,
} from "./tally";
