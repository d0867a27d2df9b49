import { describe, expect, it } from "vitest";
import { Life, LifecycleError, next, type Phase, type Step, TRANSITIONS } from "./life";

const PHASES: readonly Phase[] = ["held", "lost", "released", "completed", "handed"];
const STEPS: readonly Step[] = ["lose", "release", "complete", "hand-on"];

/** Every legal step, written out once more by hand: the table must say exactly this. */
const LEGAL: readonly (readonly [Phase, Step, Phase])[] = [
  ["held", "lose", "lost"],
  ["held", "release", "released"],
  ["held", "complete", "completed"],
  ["held", "hand-on", "handed"],
  ["lost", "release", "released"],
  ["lost", "complete", "completed"],
  ["released", "complete", "completed"],
];

const isLegal = (from: Phase, step: Step) => LEGAL.some(([f, s]) => f === from && s === step);
const ILLEGAL = PHASES.flatMap((from) =>
  STEPS.filter((step) => !isLegal(from, step)).map((step) => [from, step] as const),
);

describe("the lock handle's life", () => {
  it.each(LEGAL)("from %s, the step %s leads to %s", (from, step, to) => {
    expect(next(from, step)).toBe(to);
  });

  it.each(ILLEGAL)("from %s, the step %s is a programming error that throws", (from, step) => {
    const error = (() => {
      try {
        next(from, step);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(LifecycleError);
    expect(error).toMatchObject({ from, step });
    expect((error as Error).message).toContain(`"${step}" when ${from}`);
  });

  it("the table allows exactly the legal steps, 7 of the 20", () => {
    const allowed = PHASES.flatMap((from) =>
      STEPS.filter((step) => TRANSITIONS[from][step] !== undefined).map((step) => [from, step]),
    );
    expect(allowed).toEqual(LEGAL.map(([from, step]) => [from, step]));
    expect(ILLEGAL).toHaveLength(13);
  });

  it("no step leads back to held, and completed and handed are final", () => {
    for (const from of PHASES) {
      for (const step of STEPS) expect(TRANSITIONS[from][step]).not.toBe("held");
    }
    expect(TRANSITIONS.completed).toEqual({});
    expect(TRANSITIONS.handed).toEqual({});
  });

  it("a Life starts held and follows the steps it takes", () => {
    const life = new Life();
    expect(life.now()).toBe("held");
    expect(life.take("lose")).toBe("lost");
    expect(life.take("release")).toBe("released");
    expect(life.take("complete")).toBe("completed");
    expect(life.now()).toBe("completed");
  });

  it("an illegal step leaves the phase as it was", () => {
    const life = new Life();
    life.take("hand-on");
    expect(() => life.take("release")).toThrow(LifecycleError);
    expect(() => life.take("lose")).toThrow(LifecycleError);
    expect(life.now()).toBe("handed");
  });

  it("a second release, a second loss or a second completion is refused", () => {
    for (const step of ["release", "lose", "complete"] as const) {
      const life = new Life();
      life.take(step);
      expect(() => life.take(step)).toThrow(LifecycleError);
    }
  });
});
