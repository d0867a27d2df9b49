/**
 * The lock room's friends for the semaphore room (`src/semaphore/`): a permit is a grant of one
 * slot key, held by the lock's own handle (validity, extension, signal, release), and a permit
 * call is sized, checked and reported as a lock call is. Re-exported last by the door, so that a
 * lock-only bundle keeps its modules' order (and its size) unchanged.
 *
 * @module
 */
export type { LockCore } from "./core";
export { budgetShortfall, failureOf, tokensRuleOutMajority } from "./failure";
export type { Grant } from "./grant";
export { LockHandle } from "./handle";
export { lookOnce, type ResolvedCall, resolveCall, waitEnd } from "./options";
export type { GrantSpec, RoundTerms } from "./spec";
export { abortable, newToken } from "./timing";
