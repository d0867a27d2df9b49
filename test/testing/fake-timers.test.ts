/**
 * Memory nodes under vitest's fake timers: what docs/TESTING-HANDLERS.md promises about using the
 * two together.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLocks } from "../../src/index";
import { manualClock, memoryNodes } from "../../src/testing/index";

afterEach(() => {
  vi.useRealTimers();
});

describe("memory nodes with vitest fake timers", () => {
  it("acquire, extend and release complete without advancing the fake timers", async () => {
    vi.useFakeTimers();
    const nodes = memoryNodes(3, { clock: manualClock() });
    const locks = createLocks({ nodes });
    const lock = await locks.acquire("job", { lease: 5_000, autoExtend: false });
    await lock.extend(9_000);
    expect(nodes.map((n) => n.pttl("lock:job"))).toEqual([9_000, 9_000, 9_000]);
    await lock.release();
    expect(nodes.map((n) => n.pttl("lock:job"))).toEqual([-2, -2, -2]);
  });

  it("auto-extension runs on the fake timers: advancing them extends the key on every node", async () => {
    vi.useFakeTimers();
    const clock = manualClock();
    const nodes = memoryNodes(3, { clock });
    const lock = await createLocks({ nodes }).acquire("job", { lease: 6_000, autoExtend: true });
    // Move both: the nodes' clock (the key's PTTL) and the library's timers (auto-extension).
    clock.advance(4_000);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(nodes.map((n) => n.pttl("lock:job"))).toEqual([6_000, 6_000, 6_000]);
    expect(lock.signal.aborted).toBe(false);
    await lock.release();
  });

  it("with the default 10 s lease the first auto-extension comes at half the validity: not by 4 s, by 5 s", async () => {
    vi.useFakeTimers();
    const clock = manualClock();
    const nodes = memoryNodes(3, { clock });
    const lock = await createLocks({ nodes }).acquire("job", { autoExtend: true });
    clock.advance(4_000);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(nodes.map((n) => n.pttl("lock:job"))).toEqual([6_000, 6_000, 6_000]);
    clock.advance(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(nodes.map((n) => n.pttl("lock:job"))).toEqual([10_000, 10_000, 10_000]);
    expect(lock.signal.aborted).toBe(false);
    await lock.release();
  });
});
