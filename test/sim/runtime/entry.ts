/**
 * What a simulated client process loads: the library's public API (src/index.ts) plus the
 * runtime-neutral idempotency core that the Hono and Lambda adapters wrap, so the simulation
 * drives the same code as both adapters without a web framework in the realm.
 *
 * @module
 */

export { resolveIdempotency, runIdempotent } from "../../../src/idempotency";
export * from "../../../src/index";
// The semaphore: the simulation's semaphore workload.
export { semaphore } from "../../../src/semaphore";
