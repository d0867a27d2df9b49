import { describe, expect, it } from "vitest";
import { TransportError } from "../errors";
import { fanOut, type NodeAnswer } from "./fanout";

type Plan = { ms: number; answer: NodeAnswer<number>["status"] | "throw" | "timeout" };
const nodes = (n: number) =>
  Array.from({ length: n }, (_, index) => ({ index, host: `h${index}` }));
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function run(plans: Plan[], options: { waitAll?: boolean } = {}) {
  return fanOut(
    nodes(plans.length),
    async (node) => {
      const plan = plans[node.index] as Plan;
      await wait(plan.ms);
      if (plan.answer === "throw")
        throw new TransportError(node.index, node.host, "server", "boom");
      if (plan.answer === "timeout")
        throw new TransportError(node.index, node.host, "timeout", "slow");
      return { status: plan.answer, value: node.index };
    },
    { quorum: Math.floor(plans.length / 2) + 1, isFor: (s) => s === "ok", ...options },
  );
}

describe("fanOut", () => {
  it("decides for as soon as a majority said yes, leaving the slow minority pending", async () => {
    const round = await run([
      { ms: 1, answer: "ok" },
      { ms: 1, answer: "ok" },
      { ms: 1, answer: "ok" },
      { ms: 300, answer: "ok" },
      { ms: 300, answer: "held" },
    ]);
    expect(round.ok).toBe(true);
    expect(round.outcomes.map((o) => o.status)).toEqual(["ok", "ok", "ok", "pending", "pending"]);
    expect([...round.values.keys()].sort()).toEqual([0, 1, 2]);
    const settled = await round.settled;
    expect(settled.map((o) => o.status)).toEqual(["ok", "ok", "ok", "ok", "held"]);
  });

  it("decides against once a majority is impossible", async () => {
    const round = await run([
      { ms: 1, answer: "held" },
      { ms: 1, answer: "throw" },
      { ms: 300, answer: "ok" },
    ]);
    expect(round.ok).toBe(false);
    expect(round.outcomes.map((o) => o.status)).toEqual(["held", "error", "pending"]);
    expect(round.outcomes[1]?.error?.kind).toBe("server");
    expect(round.outcomes[0]?.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("maps timeouts to status timeout and never rejects", async () => {
    const round = await run([{ ms: 1, answer: "timeout" }]);
    expect(round.ok).toBe(false);
    expect(round.outcomes[0]?.status).toBe("timeout");
  });

  it("waitAll waits for every node", async () => {
    const round = await run(
      [
        { ms: 1, answer: "ok" },
        { ms: 1, answer: "ok" },
        { ms: 40, answer: "held" },
      ],
      { waitAll: true },
    );
    expect(round.ok).toBe(true);
    expect(round.outcomes.map((o) => o.status)).toEqual(["ok", "ok", "held"]);
  });

  it("wraps a non-TransportError failure", async () => {
    const round = await fanOut(
      nodes(1),
      async () => {
        throw new Error("weird");
      },
      { quorum: 1, isFor: () => true },
    );
    expect(round.outcomes[0]?.status).toBe("error");
    expect(round.outcomes[0]?.error?.name).toBe("TransportError");
  });
});
