/**
 * "Our releases first" per key inside workerd (docs/SAFETY.md §6): within one request, a release
 * of a lock on `["a", "b"]` not yet answered holds up the next acquire of `"a"` (and a release of
 * `"c"` one of `["c", "d"]`), through the records-and-polling wait used on Workers, so the acquire
 * never finds our own old token and reports the key busy.
 */
import { describe, expect, it } from "vitest";
import { testLocks } from "./support/cluster";

describe("our releases first, per key, in workerd", () => {
  it.each([
    [["a", "b"], "a"],
    ["c", ["c", "d"]],
  ] as const)(
    "release %j, then acquire %j with wait 0: acquired every time",
    async (first, second) => {
      const { locks } = testLocks({ requestTimeout: 1_000, lease: 5_000, wait: 0 });
      await (await locks.acquire("warm")).release();
      const outcomes: string[] = [];
      for (let i = 0; i < 30; i++) {
        const held = await locks.acquire(first as string | string[]);
        const releasing = held.release();
        outcomes.push(
          await locks.acquire(second as string | string[]).then(
            async (lock) => {
              await lock.release();
              return "acquired";
            },
            (error: Error) => error.name,
          ),
        );
        expect((await releasing).status).toBe("released");
      }
      expect(outcomes).toEqual(Array(30).fill("acquired"));
    },
  );
});
