import { describe, expect, it } from "vitest";
import { FaultSet, validateFault } from "./faults";
import { parseCommand } from "./request";

const cmd = (...parts: unknown[]) => parseCommand(parts, "test");

describe("FaultSet", () => {
  it("applies the first matching fault, FIFO, and counts it down", () => {
    const faults = new FaultSet(1);
    faults.add({ kind: "status", status: 500, command: "SET", count: 1 });
    faults.add({ kind: "hang" });
    expect(faults.take([cmd("get", "k")])?.kind).toBe("hang");
    expect(faults.take([cmd("set", "k", "v")])?.kind).toBe("status");
    expect(faults.take([cmd("set", "k", "v")])?.kind).toBe("hang");
    expect(faults.list()).toEqual([{ kind: "hang" }]);
  });

  it("lets a noscript fault without command match EVALSHA requests only", () => {
    const faults = new FaultSet(1);
    faults.add({ kind: "noscript", count: 2 });
    expect(faults.take([cmd("get", "k")])).toBeUndefined();
    expect(faults.take([cmd("EVALSHA", "abc", 0)])?.kind).toBe("noscript");
    expect(faults.list()).toEqual([{ kind: "noscript", count: 1 }]);
  });

  it("draws latency ranges from a seeded generator: same seed, same delays, within range", () => {
    const draw = (seed: number) => {
      const faults = new FaultSet(seed);
      return Array.from({ length: 50 }, () => faults.delayOf([10, 20]));
    };
    const a = draw(7);
    expect(draw(7)).toEqual(a);
    expect(draw(8)).not.toEqual(a);
    expect(a.every((ms) => ms >= 10 && ms <= 20)).toBe(true);
    expect(new FaultSet(1).delayOf(15)).toBe(15);
  });
});

describe("validateFault", () => {
  it("names the offending field", () => {
    expect(() => validateFault(null)).toThrow(/object/);
    expect(() => validateFault({ kind: "latency", ms: -1 })).toThrow(/"ms"/);
    expect(() => validateFault({ kind: "status", status: 200.5 })).toThrow(/"status"/);
    expect(() => validateFault({ kind: "status", status: 500, body: 1 })).toThrow(/"body"/);
    expect(() => validateFault({ kind: "hang", command: "" })).toThrow(/"command"/);
    expect(() => validateFault({ kind: "hang", count: 1.5 })).toThrow(/"count"/);
    // A typo (or a field of another kind) must not leave a fault that acts otherwise than meant.
    expect(() => validateFault({ kind: "latency", ms: 5, cuont: 1 })).toThrow(
      /unknown field "cuont"/,
    );
    expect(() => validateFault({ kind: "hang", ms: 5 })).toThrow(/unknown field "ms"/);
    expect(validateFault({ kind: "latency", ms: [1, 1] })).toEqual({ kind: "latency", ms: [1, 1] });
  });
});
