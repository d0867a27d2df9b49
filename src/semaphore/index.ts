/**
 * The semaphore room's door (ARCHITECTURE.md "Rooms and doors"): a counting semaphore on a quorum
 * (docs/design/semaphore.md, docs/SAFETY.md §4c): `semaphore(locks, key, { permits })`, its
 * permits, and the waiter's per-slot count. Not re-exported by `src/index.ts` yet: the
 * simulation's semaphore workload and the fair wait come first.
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
