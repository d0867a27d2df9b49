import { describe, expect, it } from "vitest";
import { type NodeOutcome, TransportError } from "./base";
import { configurationFault, describeNodes, reasonOf } from "./report";

const failed = (index: number, kind: TransportError["kind"], message: string): NodeOutcome => ({
  index,
  host: `h:${index}`,
  status: kind === "timeout" ? "timeout" : "error",
  error: new TransportError(index, `h:${index}`, kind, message),
});

describe("report", () => {
  it("names each node that answered against, with its reason in words", () => {
    const outcomes: NodeOutcome[] = [
      { index: 0, host: "h:0", status: "held", pttl: 4200 },
      failed(1, "timeout", "no answer within 500 ms"),
      { index: 2, host: "h:2", status: "pending" },
      { index: 3, host: "h:3", status: "ok" },
      { index: 4, host: "h:4", status: "held", reserved: true, pttl: 80 },
    ];
    expect(describeNodes(outcomes)).toBe(
      "node 0 (h:0): held by another caller for 4200 ms more; " +
        "node 1 (h:1): no answer within 500 ms; node 2 (h:2): no answer yet; " +
        "node 4 (h:4): reserved for a waiter a release woke",
    );
    expect(describeNodes(outcomes, (o) => o.status === "timeout")).toBe(
      "node 1 (h:1): no answer within 500 ms",
    );
  });

  it("shortens a long reason instead of dropping it", () => {
    const reason = reasonOf(failed(0, "server", `error reply: ERR ${"x".repeat(300)}`)) ?? "";
    expect(reason).toHaveLength(120);
    expect(reason.startsWith("error reply: ERR xxx")).toBe(true);
    expect(reason.endsWith("…")).toBe(true);
  });

  it("puts the configuration fault first only when every failure is a rejected token", () => {
    const auth = failed(
      0,
      "auth",
      "rejected the token (HTTP 401 Unauthorized): check this node's token",
    );
    expect(configurationFault([auth, { index: 1, host: "h:1", status: "ok" }])).toBe(
      "check the nodes' tokens (EDGELOCK_NODES or the nodes option): node 0 (h:0) rejects the token",
    );
    expect(
      configurationFault([auth, failed(1, "timeout", "no answer within 5 ms")]),
    ).toBeUndefined();
    expect(configurationFault([{ index: 0, host: "h:0", status: "held" }])).toBeUndefined();
  });
});
