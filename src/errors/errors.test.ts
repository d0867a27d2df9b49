import { describe, expect, it } from "vitest";
import {
  BudgetExhaustedError,
  ConfigurationError,
  isBudgetExhaustedError,
  isConfigurationError,
  isLockBusyError,
  isLockEndedError,
  isLockError,
  isLockLostError,
  isQuorumError,
  isTransportError,
  LockBusyError,
  LockEndedError,
  LockError,
  LockLostError,
  QuorumError,
  TransportError,
} from ".";

describe("errors", () => {
  const errors = [
    [new LockBusyError("k", 1200), "LockBusyError", isLockBusyError],
    [new QuorumError("k", "no majority"), "QuorumError", isQuorumError],
    [new LockLostError("k", "expired"), "LockLostError", isLockLostError],
    [new LockEndedError("k", "released"), "LockEndedError", isLockEndedError],
    [new BudgetExhaustedError("no time", 0, 3), "BudgetExhaustedError", isBudgetExhaustedError],
    [new ConfigurationError("lease", "bad"), "ConfigurationError", isConfigurationError],
    [new TransportError(2, "h:1", "timeout", "slow"), "TransportError", isTransportError],
  ] as const;

  it.each(errors)(
    "%s has its name, extends LockError and passes its guard",
    (error, name, guard) => {
      expect(error.name).toBe(name);
      expect(error).toBeInstanceOf(LockError);
      expect(error).toBeInstanceOf(Error);
      expect(guard(error)).toBe(true);
      expect(isLockError(error)).toBe(true);
      expect(error.outcomes).toEqual([]);
    },
  );

  it("guards work across realms (plain objects with the name)", () => {
    const foreign = { name: "LockBusyError", message: "busy", retryAfter: 5 };
    expect(isLockBusyError(foreign)).toBe(true);
    expect(isLockError(foreign)).toBe(true);
    expect(isQuorumError(foreign)).toBe(false);
    expect(isLockError(new Error("x"))).toBe(false);
    expect(isLockError(null)).toBe(false);
    expect(isLockError("LockError")).toBe(false);
  });

  it("carries cause, outcomes and fields", () => {
    const cause = new Error("root");
    const outcomes = [{ index: 0, host: "h", status: "held" as const, pttl: 10 }];
    const busy = new LockBusyError("k", 10, { cause, outcomes });
    expect(busy.cause).toBe(cause);
    expect(busy.outcomes).toBe(outcomes);
    expect(busy.retryAfter).toBe(10);
    expect(busy.key).toBe("k");
    const t = new TransportError(3, "eu1.upstash.io", "network", "reset");
    expect(t.message).toBe("node 3 (eu1.upstash.io): reset");
    expect([t.node, t.host, t.kind]).toEqual([3, "eu1.upstash.io", "network"]);
    expect(new ConfigurationError("nodes[1]", "bad").option).toBe("nodes[1]");
    expect("cause" in new QuorumError("k", "x")).toBe(false);
  });
});
