/**
 * The time a memory node reads: when a key it holds expires, and what PTTL reports. Real time by
 * default; a {@link ManualClock} lets a test make a lock's key expire without waiting.
 *
 * @module
 */
import { ConfigurationError, shown } from "../errors";

/**
 * What a memory node reads the time from: `now()` in epoch milliseconds. Scripts read it once
 * when they start (time stands still during a script, as in Redis).
 *
 * @example
 * const clock: Clock = { now: () => Date.now() };
 */
export interface Clock {
  now(): number;
}

/**
 * A {@link Clock} that moves only when the test moves it. `advance(ms)` jumps forward; keys whose
 * deadline is then behind `now()` are gone on the next access, exactly as on a Redis server whose
 * clock moved on (a key with PTTL 0 is still there; one millisecond later it is not).
 *
 * @example
 * const clock = manualClock();
 * clock.advance(30_000); // every lease of 30 s or less on nodes reading this clock has expired
 */
export interface ManualClock extends Clock {
  /**
   * Move the clock forward by `ms` (an integer ≥ 0).
   *
   * @throws {ConfigurationError} naming `ms` for a negative, fractional or non-number value
   */
  advance(ms: number): void;
}

/**
 * Real time: `Date.now()`. The default clock of a memory node.
 *
 * @example
 * memoryNode({ clock: realClock }); // the same as memoryNode()
 */
export const realClock: Clock = { now: () => Date.now() };

/**
 * A clock for tests, starting at `start` (epoch ms; default: `Date.now()` when it is made) and
 * moving only by {@link ManualClock.advance}. Give it to memory nodes (`memoryNodes(3, { clock })`)
 * to expire their keys on demand.
 *
 * What it controls: only the memory nodes' time, i.e. when keys expire and the PTTL that scripts
 * and `node.pttl(key)` see. What it does not: edgelock's own timers and measurements in the
 * process (request timeouts, retry and wait backoff, the lease's validity measured with
 * `performance.now()`, auto-extension), which run on the runtime's timers. For those, use your
 * test runner's fake timers (vitest's `vi.useFakeTimers()`); the two are independent, and a
 * memory node answers within the same tick, so it needs no timer to be advanced.
 *
 * @throws {ConfigurationError} naming `start` when it is not a finite number
 * @example
 * const clock = manualClock();
 * const locks = createLocks({ nodes: memoryNodes(3, { clock }) });
 * await locks.acquire("job", { lease: 5_000 });
 * clock.advance(5_001); // the key is gone on every node: another caller gets the lock
 */
export function manualClock(start: number = Date.now()): ManualClock {
  if (typeof start !== "number" || !Number.isFinite(start)) {
    throw new ConfigurationError(
      "start",
      `expected a finite number (epoch ms), got ${shown(start)}`,
    );
  }
  let now = start;
  return {
    now: () => now,
    advance(ms: number): void {
      if (typeof ms !== "number" || !Number.isSafeInteger(ms) || ms < 0) {
        throw new ConfigurationError("ms", `expected an integer >= 0, got ${shown(ms)}`);
      }
      now += ms;
    },
  };
}
