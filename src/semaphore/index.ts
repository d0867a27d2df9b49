/**
 * The semaphore room's door (ARCHITECTURE.md "Rooms and doors"): a counting semaphore on a quorum
 * (docs/design/semaphore.md). Not reachable from the API yet: `src/index.ts` exports
 * nothing of it, and so far the room holds only the waiter's per-slot count (build step 4, its
 * pure part).
 *
 * @module
 */
export {
  type SlotCounter,
  type SlotCounting,
  type SlotDecision,
  type SlotPass,
  SlotTally,
} from "./tally";
