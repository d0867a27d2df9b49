/**
 * The one server line of a 503 (`unavailableLine`), word for word: what an operator reads in
 * `wrangler tail` or CloudWatch. The contract's case C9 checks that every HTTP surface writes it.
 */
import { describe, expect, it } from "vitest";
import { routeOf, unavailableLine } from "../../src/idempotency";
import { BudgetExhaustedError, QuorumError } from "../../src/index";

describe("the 503 log line", () => {
  it("names the route, the key and the cause in words", () => {
    const error = new QuorumError("invoice:42", "no majority (2 of 3 nodes needed)");
    const info = { route: "POST /charge/42", key: "invoice:42", error, subject: "lock" as const };
    expect(unavailableLine(info)).toBe(
      'edgelock: 503 for POST /charge/42 (lock "invoice:42"): too few lock nodes answered: no majority (2 of 3 nodes needed)',
    );
  });

  it("several keys, and an exhausted budget", () => {
    const error = new BudgetExhaustedError("budget exhausted: 0 ms left", 0, 0);
    const line = unavailableLine({
      route: "POST /transfer",
      key: ["account:a", "account:b"],
      error,
      subject: "lock",
    });
    expect(line).toBe(
      `edgelock: 503 for POST /transfer (locks "account:a", "account:b"): the invocation's budget cannot cover the lock: ${error.message}`,
    );
  });

  it("a semaphore's (limit()): named as one, its permit the budget cannot cover", () => {
    const error = new QuorumError("llm", "no majority (2 of 3 nodes needed)", {
      subject: "semaphore",
    });
    expect(error.message).toBe('semaphore "llm": no majority (2 of 3 nodes needed)');
    const info = { route: "POST /ask", key: "llm", error, subject: "semaphore" as const };
    expect(unavailableLine(info)).toBe(
      'edgelock: 503 for POST /ask (semaphore "llm"): too few lock nodes answered: no majority (2 of 3 nodes needed)',
    );
    const short = new BudgetExhaustedError("budget exhausted: 0 ms left", 0, 0);
    expect(unavailableLine({ ...info, error: short })).toBe(
      `edgelock: 503 for POST /ask (semaphore "llm"): the invocation's budget cannot cover the permit: ${short.message}`,
    );
  });

  it("routeOf drops the query string (it may carry a secret)", () => {
    expect(routeOf("post", "/charge/42?sig=s3cr3t")).toBe("POST /charge/42");
    expect(routeOf("PATCH", "/a")).toBe("PATCH /a");
  });
});
