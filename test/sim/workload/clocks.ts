/**
 * How far the simulated clocks may drift: the `driftFactor` of every simulated `Locks` instance,
 * and the bound on the rates of the clients' and the nodes' clocks that keeps docs/SAFETY.md A1
 * (and so E2) true for every client–node pair.
 *
 * @module
 */

import fc from "fast-check";

/**
 * The `driftFactor` every simulated `Locks` instance is created with (the library's default).
 */
export const DRIFT_FACTOR = 0.01;

/**
 * How far a clock's rate may be from virtual (real) time: client clocks and node clocks alike run
 * at a rate in [1 − spread, 1 + spread], with spread = driftFactor / 2.
 *
 * Why half: docs/SAFETY.md A1 asks that `drift(T) = T·driftFactor + 2 ms` cover the difference
 * over a TTL T, and E2 uses it between one client and one node. A client whose clock runs at rate
 * c (its ms per real ms) takes its round start s, then counts T − drift(T) of its own ms: its
 * validity ends (T − drift(T)) / c real ms after s. A node whose clock runs at rate n placed the
 * token at or after s with PX T: it keeps it at least T / n real ms (its floored ms only add to
 * that). So E2 holds for every T when c / n ≥ 1 − driftFactor. With both rates within
 * driftFactor / 2 of 1, the worst case (a slow client, a fast node) is
 * c / n = (1 − f/2) / (1 + f/2) ≥ 1 − f, for any f ≥ 0: every client–node pair is within what
 * drift(T) covers, and each clock is within driftFactor of real time as A1 says. Both clocks at
 * the full factor (a client at 1 − f, a node at 1 + f) are within driftFactor of real time too,
 * but c / n ≈ 1 − 2f breaks E2: `test/sim/node-clocks.test.ts` finds the overlap there.
 *
 * Two clients' clocks (the fairness check's skew) are then within driftFactor of each other.
 */
export const CLOCK_RATE_SPREAD = DRIFT_FACTOR / 2;

/**
 * A clock rate within {@link CLOCK_RATE_SPREAD}, in steps of 10⁻⁵; shrinks towards 1 (exact).
 *
 * @example
 * fc.record({ rate: clockRate() }); // { rate: 0.99731 }, …
 */
export const clockRate = (): fc.Arbitrary<number> => {
  const steps = Math.round(CLOCK_RATE_SPREAD * 100_000);
  return fc.integer({ min: -steps, max: steps }).map((d) => 1 + d / 100_000);
};
