import { describe, expect, it } from "vitest";
import { clearLockAnswer, isLockAnswer, markLockAnswer } from "./lock-answer";

describe("withLock's busy answers, as withIdempotency sees them", () => {
  it("the invocation is marked: any result of it counts, a copy of the answer too", () => {
    const context = {};
    const answer = { statusCode: 423 };
    expect(markLockAnswer(context, answer)).toBe(answer);
    expect(isLockAnswer(context, answer)).toBe(true);
    expect(
      isLockAnswer(context, { ...answer, headers: { "access-control-allow-origin": "*" } }),
    ).toBe(true);
    expect(isLockAnswer(context, "busy")).toBe(true);
    expect(isLockAnswer({}, answer)).toBe(false);
  });

  it("a string or number answer is marked on the invocation's context too", () => {
    const context = {};
    markLockAnswer(context, "busy");
    expect(isLockAnswer({}, "busy")).toBe(false);
    expect(isLockAnswer(context, "busy")).toBe(true);
  });

  it("a mark an earlier invocation of a reused context left is cleared before the handler runs", () => {
    const context = {};
    markLockAnswer(context, 7);
    clearLockAnswer(context);
    expect(isLockAnswer(context, 7)).toBe(false);
    expect(isLockAnswer(context, { statusCode: 200 })).toBe(false);
  });

  it("without a context object, an object answer is marked by identity: that answer only", () => {
    const answer = { statusCode: 423 };
    markLockAnswer(undefined, answer);
    expect(isLockAnswer(undefined, answer)).toBe(true);
    expect(isLockAnswer(undefined, { ...answer })).toBe(false);
    markLockAnswer(undefined, "busy");
    expect(isLockAnswer(undefined, "busy")).toBe(false);
  });
});
