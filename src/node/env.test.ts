import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../errors";
import { nodesFromEnv } from "./env";

const SECRET = "AXXXsecret-token-value-1234567890";

/** Calls `nodesFromEnv` and returns the ConfigurationError it throws. */
function failure(env: Record<string, unknown>): ConfigurationError {
  try {
    nodesFromEnv(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error("expected nodesFromEnv to throw");
}

describe("nodesFromEnv", () => {
  it("reads EDGELOCK_NODES as JSON", () => {
    const nodes = [
      { url: "https://a.upstash.io", token: "ta" },
      { url: "https://b.upstash.io", token: "tb" },
    ];
    expect(nodesFromEnv({ EDGELOCK_NODES: JSON.stringify(nodes) })).toEqual(nodes);
  });

  it("accepts an already-parsed [vars] array, and trims values", () => {
    const env = { EDGELOCK_NODES: [{ url: " http://127.0.0.1:8079 ", token: " t " }] };
    expect(nodesFromEnv(env)).toEqual([{ url: "http://127.0.0.1:8079", token: "t" }]);
  });

  it("prefers EDGELOCK_NODES over the Upstash pair", () => {
    const env = {
      EDGELOCK_NODES: '[{"url":"https://a.io","token":"x"}]',
      UPSTASH_REDIS_REST_URL: "https://b.io",
      UPSTASH_REDIS_REST_TOKEN: "y",
    };
    expect(nodesFromEnv(env)).toEqual([{ url: "https://a.io", token: "x" }]);
  });

  it("falls back to UPSTASH_REDIS_REST_URL + _TOKEN as one node (empty EDGELOCK_NODES = unset)", () => {
    const env = {
      EDGELOCK_NODES: "",
      UPSTASH_REDIS_REST_URL: "https://b.io",
      UPSTASH_REDIS_REST_TOKEN: "y",
    };
    expect(nodesFromEnv(env)).toEqual([{ url: "https://b.io", token: "y" }]);
  });

  it.each([
    [{}, "EDGELOCK_NODES"],
    [{ EDGELOCK_NODES: `[{"url":"https://a.io","token":"${SECRET}"` }, "EDGELOCK_NODES"],
    [{ EDGELOCK_NODES: `{"url":"https://a.io","token":"${SECRET}"}` }, "EDGELOCK_NODES"],
    [{ EDGELOCK_NODES: "[]" }, "EDGELOCK_NODES"],
    [{ EDGELOCK_NODES: `["${SECRET}"]` }, "EDGELOCK_NODES[0]"],
    [
      { EDGELOCK_NODES: `[{"url":"https://a.io","token":"t"},{"url":"${SECRET}","token":"t"}]` },
      "EDGELOCK_NODES[1].url",
    ],
    [{ EDGELOCK_NODES: '[{"url":"ftp://a.io","token":"t"}]' }, "EDGELOCK_NODES[0].url"],
    [{ EDGELOCK_NODES: '[{"url":"https://a.io","token":""}]' }, "EDGELOCK_NODES[0].token"],
    [{ EDGELOCK_NODES: '[{"url":"https://a.io"}]' }, "EDGELOCK_NODES[0].token"],
    [{ UPSTASH_REDIS_REST_TOKEN: SECRET }, "UPSTASH_REDIS_REST_URL"],
    [
      { UPSTASH_REDIS_REST_URL: SECRET, UPSTASH_REDIS_REST_TOKEN: SECRET },
      "UPSTASH_REDIS_REST_URL",
    ],
    [{ UPSTASH_REDIS_REST_URL: "https://a.io" }, "UPSTASH_REDIS_REST_TOKEN"],
  ])("rejects %j naming %s, without echoing the value", (env, option) => {
    const error = failure(env);
    expect(error.option).toBe(option);
    expect(error.message).not.toContain(SECRET);
    expect(error.message).not.toContain("secret-token");
    expect(error.cause).toBeUndefined();
  });
});
