import { Redis } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { ConfigurationError, isConfigurationError } from "../errors";
import { checkKey } from "./keyset";
import { createLocks } from "./locks";
import { DEFAULTS, resolveCall, resolveOptions } from "./options";
import type { LocksOptions } from "./types";

const TOKEN = "s3cr3t-token-value";
const node = (i: number) => ({ url: `https://node${i}.example.com`, token: TOKEN });
const three = [node(0), node(1), node(2)];

function optionOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(isConfigurationError(error)).toBe(true);
    expect((error as Error).message).not.toContain(TOKEN);
    return (error as ConfigurationError).option;
  }
  return undefined;
}

describe("createLocks options", () => {
  it("DEFAULTS are frozen and documented values", () => {
    expect(Object.isFrozen(DEFAULTS)).toBe(true);
    expect(DEFAULTS).toMatchObject({
      prefix: "lock:",
      lease: 10_000,
      fencing: false,
      driftFactor: 0.01,
    });
  });

  const cases: [string, unknown, string][] = [
    ["no options", undefined, "options"],
    ["nodes missing", {}, "nodes"],
    ["nodes empty", { nodes: [] }, "nodes"],
    ["nodes not an array", { nodes: node(0) }, "nodes"],
    ["node is a string", { nodes: [node(0), "https://x.io"] }, "nodes[1]"],
    ["node without token", { nodes: [node(0), { url: "https://x.io" }] }, "nodes[1]"],
    ["node token not a string", { nodes: [{ url: "https://x.io", token: 5 }] }, "nodes[0]"],
    [
      "node url not http(s)",
      { nodes: [{ url: "redis://x.io:6379", token: TOKEN }] },
      "nodes[0].url",
    ],
    ["node url garbage", { nodes: [node(0), { url: "not a url", token: TOKEN }] }, "nodes[1].url"],
    ["node token empty", { nodes: [{ url: "https://x.io", token: " " }] }, "nodes[0].token"],
    ["same URL twice", { nodes: [node(0), node(1), node(0)] }, "nodes[2]"],
    [
      "same URL twice, normalized",
      {
        nodes: [
          { url: "https://A.example.com/", token: TOKEN },
          { url: "https://a.example.com", token: "t2" },
        ],
      },
      "nodes[1]",
    ],
    [
      "same URL, default port",
      {
        nodes: [
          { url: "https://a.example.com:443", token: TOKEN },
          { url: "https://a.example.com", token: "t" },
        ],
      },
      "nodes[1]",
    ],
    ["lease zero", { nodes: three, lease: 0 }, "lease"],
    ["lease negative", { nodes: three, lease: -5 }, "lease"],
    ["lease fractional", { nodes: three, lease: 10.5 }, "lease"],
    ["lease string", { nodes: three, lease: "10s" }, "lease"],
    ["lease beyond timer range", { nodes: three, lease: 2 ** 31 }, "lease"],
    ["lease too short for minValidity", { nodes: three, lease: 5, minValidity: 10 }, "lease"],
    ["driftFactor negative", { nodes: three, driftFactor: -0.1 }, "driftFactor"],
    ["driftFactor 0.5", { nodes: three, driftFactor: 0.5 }, "driftFactor"],
    ["driftFactor NaN", { nodes: three, driftFactor: Number.NaN }, "driftFactor"],
    ["prefix empty", { nodes: three, prefix: "" }, "prefix"],
    ["prefix too long", { nodes: three, prefix: "p".repeat(257) }, "prefix"],
    ["prefix not a string", { nodes: three, prefix: 1 }, "prefix"],
    ["fencing not boolean", { nodes: three, fencing: "yes" }, "fencing"],
    ["wait negative", { nodes: three, wait: -1 }, "wait"],
    ["wait fractional", { nodes: three, wait: 1.5 }, "wait"],
    ["minValidity negative", { nodes: three, minValidity: -1 }, "minValidity"],
    ["requestTimeout zero", { nodes: three, requestTimeout: 0 }, "requestTimeout"],
    ["retryDelay zero", { nodes: three, retryDelay: 0 }, "retryDelay"],
    [
      "retryDelayMax below retryDelay",
      { nodes: three, retryDelay: 100, retryDelayMax: 50 },
      "retryDelayMax",
    ],
    ["onEvent not a function", { nodes: three, onEvent: "log" }, "onEvent"],
    ["unknown option", { nodes: three, leaseMs: 5 }, "leaseMs"],
  ];

  it.each(cases)("%s → ConfigurationError naming %s", (_, options, option) => {
    expect(optionOf(() => createLocks(options as LocksOptions))).toBe(option);
  });

  it("the same Redis instance twice is rejected; distinct instances at distinct URLs are fine", () => {
    const a = new Redis({ url: "https://a.example.com", token: TOKEN });
    const b = new Redis({ url: "https://b.example.com", token: TOKEN });
    expect(optionOf(() => createLocks({ nodes: [a, b, a] }))).toBe("nodes[2]");
    const a2 = new Redis({ url: "https://a.example.com/", token: "other" });
    expect(optionOf(() => createLocks({ nodes: [a, a2] }))).toBe("nodes[1]");
    expect(optionOf(() => createLocks({ nodes: [a, b, node(3)] }))).toBeUndefined();
  });

  it("accepts valid options and derives the quorum", () => {
    expect(resolveOptions({ nodes: [node(0)] }).quorum).toBe(1);
    expect(resolveOptions({ nodes: three }).quorum).toBe(2);
    const five = resolveOptions({ nodes: [0, 1, 2, 3, 4].map(node), lease: 300, fencing: true });
    expect(five.quorum).toBe(3);
    expect(five.nodes.map((n) => n.host)).toEqual(
      [0, 1, 2, 3, 4].map((i) => `node${i}.example.com`),
    );
  });
});

describe("per-call options and keys", () => {
  const resolved = resolveOptions({ nodes: three, lease: 1_000 });
  const calls: [string, unknown, string][] = [
    ["lease zero", { lease: 0 }, "lease"],
    ["lease fractional", { lease: 2.5 }, "lease"],
    ["wait negative", { wait: -10 }, "wait"],
    ["wait not a number", { wait: "1s" }, "wait"],
    ["signal not a signal", { signal: {} }, "signal"],
    ["budget not a budget", { budget: { deadline: 5 } }, "budget"],
    ["autoExtend not boolean", { autoExtend: 1 }, "autoExtend"],
  ];
  it.each(calls)("%s → ConfigurationError naming %s", (_, options, option) => {
    expect(optionOf(() => resolveCall(resolved, options as never, false))).toBe(option);
  });

  it("fills defaults", () => {
    expect(resolveCall(resolved, undefined, true)).toEqual({
      lease: 1_000,
      wait: 0,
      signal: undefined,
      budget: undefined,
      autoExtend: true,
    });
  });

  it.each([
    ["", false],
    ["k".repeat(1_025), false],
    ["x:fence", true],
    ["x:wait", false],
  ])("key %j (fencing %s) is rejected", (key, fencing) => {
    expect(optionOf(() => checkKey(key, fencing))).toBe("key");
  });

  it("accepts ordinary keys", () => {
    expect(checkKey("invoice:42", true)).toBe("invoice:42");
    expect(checkKey("x:fence", false)).toBe("x:fence");
  });

  it("acquire rejects a bad key before calling any node", async () => {
    const locks = createLocks({ nodes: three });
    await expect(locks.acquire("")).rejects.toBeInstanceOf(ConfigurationError);
    await expect(locks.acquire("k", { lease: -1 })).rejects.toMatchObject({ option: "lease" });
  });
});
