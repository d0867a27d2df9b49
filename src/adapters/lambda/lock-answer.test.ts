import { describe, expect, it } from "vitest";
import { clearLockAnswer, isLockAnswer, markLockAnswer } from "./lock-answer";

describe("withLock's busy answers, as withIdempotency sees them", () => {
  it("an object answer is marked by identity: that answer only, whatever the context", () => {
    const answer = { statusCode: 423 };
    expect(markLockAnswer({}, answer)).toBe(answer);
    expect(isLockAnswer({}, answer)).toBe(true);
    expect(isLockAnswer({}, { statusCode: 423 })).toBe(false);
  });

  it("a string or number answer is marked on the invocation's context, read once", () => {
    const context = {};
    markLockAnswer(context, "busy");
    expect(isLockAnswer({}, "busy")).toBe(false);
    expect(isLockAnswer(context, "other")).toBe(false);
    markLockAnswer(context, "busy");
    expect(isLockAnswer(context, "busy")).toBe(true);
    expect(isLockAnswer(context, "busy")).toBe(false);
  });

  it("a mark an earlier invocation of a reused context left is cleared before the handler runs", () => {
    const context = {};
    markLockAnswer(context, 7);
    clearLockAnswer(context);
    expect(isLockAnswer(context, 7)).toBe(false);
  });
});
