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

  it('reads {"nodes":[…]}, the first line `edgelock dev` prints, as the same nodes', () => {
    const nodes = [
      { url: "http://127.0.0.1:40001", token: "ta" },
      { url: "http://127.0.0.1:40002", token: "tb" },
    ];
    expect(nodesFromEnv({ EDGELOCK_NODES: JSON.stringify({ nodes }) })).toEqual(nodes);
    expect(nodesFromEnv({ EDGELOCK_NODES: { nodes } })).toEqual(nodes); // a parsed [vars] value
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
    [{ EDGELOCK_NODES: '{"nodes":[]}' }, "EDGELOCK_NODES"],
    [{ EDGELOCK_NODES: `{"nodes":{"url":"https://a.io","token":"${SECRET}"}}` }, "EDGELOCK_NODES"],
    [
      { EDGELOCK_NODES: `{"Nodes":[{"url":"https://a.io","token":"${SECRET}"}]}` },
      "EDGELOCK_NODES",
    ],
    [{ EDGELOCK_NODES: `"${SECRET}"` }, "EDGELOCK_NODES"],
    [{ EDGELOCK_NODES: "42" }, "EDGELOCK_NODES"],
    [{ EDGELOCK_NODES: `{"nodes":["${SECRET}"]}` }, "EDGELOCK_NODES[0]"],
    [{ EDGELOCK_NODES: `{"nodes":[{"url":"${SECRET}","token":"t"}]}` }, "EDGELOCK_NODES[0].url"],
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
    expect(error.variable).toBe(true);
    expect(error.message.startsWith(`invalid environment variable \`${option}\`: `)).toBe(true);
    expect(error.message).not.toContain(SECRET);
    expect(error.message).not.toContain("secret-token");
    expect(error.cause).toBeUndefined();
  });

  it("says which shapes it takes when EDGELOCK_NODES is neither", () => {
    for (const value of ["[]", '{"nodes":[]}', '{"url":"https://a.io","token":"t"}', "42"]) {
      expect(failure({ EDGELOCK_NODES: value }).message).toBe(
        'invalid environment variable `EDGELOCK_NODES`: expected at least one node, as JSON [{"url","token"}, …] or {"nodes":[{"url","token"}, …]}',
      );
    }
    expect(failure({ EDGELOCK_NODES: "[{" }).message).toBe(
      'invalid environment variable `EDGELOCK_NODES`: is not valid JSON; expected [{"url","token"}, …] or {"nodes":[{"url","token"}, …]}',
    );
    expect(
      failure({ EDGELOCK_NODES: '{"nodes":[{"url":"ftp://a.io","token":"t"}]}' }).message,
    ).toBe("invalid environment variable `EDGELOCK_NODES[0].url`: expected an http(s) URL string");
  });

  it("an env argument that is not an object is an invalid option, not a variable", () => {
    const error = failure(null as unknown as Record<string, unknown>);
    expect(error.option).toBe("env");
    expect(error.variable).toBe(false);
    expect(error.message).toBe(
      "invalid option `env`: expected an env object (a Worker's env, or process.env)",
    );
  });

  it("a Workers-style env without the variables, where process.env has them: says c.env is not process.env", () => {
    const saved = process.env.EDGELOCK_NODES;
    process.env.EDGELOCK_NODES = JSON.stringify([{ url: "https://a.upstash.io", token: SECRET }]);
    try {
      // A Hono `c.env` on @hono/node-server: the server's bindings, not the environment.
      const error = failure({ incoming: {}, outgoing: {} });
      expect(error.option).toBe("EDGELOCK_NODES");
      expect(error.message).toBe(
        "invalid environment variable `EDGELOCK_NODES`: not set: set EDGELOCK_NODES, or" +
          " UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN for a single node. EDGELOCK_NODES" +
          " is set in process.env, but the env object given is not process.env: outside Cloudflare" +
          " Workers (Node with @hono/node-server, Bun, Deno) a Hono `c.env` holds the server's" +
          " bindings, not the environment; pass process.env (Deno: Deno.env.toObject())",
      );
      expect(error.message).not.toContain("secret-token");
      // process.env itself, and an env when process.env has nothing either: no such hint.
      expect(nodesFromEnv(process.env)).toHaveLength(1);
      delete process.env.EDGELOCK_NODES;
      expect(failure({}).message).toBe(
        "invalid environment variable `EDGELOCK_NODES`: not set: set EDGELOCK_NODES, or" +
          " UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN for a single node",
      );
    } finally {
      if (saved === undefined) delete process.env.EDGELOCK_NODES;
      else process.env.EDGELOCK_NODES = saved;
    }
  });
});
