import { describe, expect, it } from "vitest";
import { TransportError } from "../errors";
import { classify, sanitize } from "./classify";
import { normalizeUrl } from "./create";

const LOCK_TOKEN = "0123456789abcdef0123456789abcdef";

describe("classify", () => {
  it("sanitize drops the echoed command body and query tokens", () => {
    const message = `ERR injected fault, command was: ["evalsha","abc",2,"k","k:fence","${LOCK_TOKEN}","300"]`;
    expect(sanitize(message)).toBe("ERR injected fault");
    expect(sanitize("GET https://x.io/?_token=SECRET&a=1 failed")).toBe(
      "GET https://x.io/?_token=***&a=1 failed",
    );
  });

  it("maps client errors to kinds, naming the node and never the token", () => {
    const upstash = Object.assign(
      new Error(`NOSCRIPT No matching script, command was: ["${LOCK_TOKEN}"]`),
      {
        name: "UpstashError",
      },
    );
    const server = classify(1, "h:1", upstash, undefined);
    expect(server.kind).toBe("server");
    expect(server.message).toBe("node 1 (h:1): error reply: NOSCRIPT No matching script");
    expect(JSON.stringify(server)).not.toContain(LOCK_TOKEN);
    expect(String((server.cause as Error).message)).not.toContain(LOCK_TOKEN);

    const parse = Object.assign(new Error("Unable to parse response body: <html>"), {
      name: "UpstashJSONParseError",
    });
    expect(classify(0, "h", parse, undefined).kind).toBe("reply");
    expect(classify(0, "h", new TypeError("Request did not return a result"), undefined).kind).toBe(
      "reply",
    );
    const reset = new TypeError("fetch failed", {
      cause: Object.assign(new Error("x"), { code: "ECONNRESET" }),
    });
    const network = classify(2, "h", reset, undefined);
    expect(network.kind).toBe("network");
    expect(network.message).toBe("node 2 (h): unreachable (fetch failed: ECONNRESET)");
    expect(network.cause).toBe(reset);
    expect(classify(0, "h", new DOMException("t", "TimeoutError"), undefined).kind).toBe("timeout");
    const ours = classify(0, "h", new Error("whatever"), 250);
    expect([ours.kind, ours.message]).toEqual(["timeout", "node 0 (h): no answer within 250 ms"]);
    const already = new TransportError(4, "x", "reply", "bad");
    expect(classify(4, "x", already, undefined)).toBe(already);
  });

  it("a rejected token is kind auth, with what to fix (401 and 403 bodies of known servers)", () => {
    const reply = (message: string) =>
      classify(0, "h", Object.assign(new Error(message), { name: "UpstashError" }), undefined);
    for (const body of [
      "WRONGPASS invalid or missing auth token",
      "Unauthorized",
      "Invalid token",
      "Missing/Invalid authorization header",
    ]) {
      const error = reply(`${body}, command was: ["evalsha","${LOCK_TOKEN}"]`);
      expect(error.kind).toBe("auth");
      expect(error.message).toBe(
        `node 0 (h): rejected the token (HTTP 401 ${body}): check this node's token`,
      );
    }
    const noperm = reply("NOPERM this user has no permissions to run the 'evalsha' command");
    expect(noperm.kind).toBe("auth");
    expect(noperm.message).toMatch(
      /^node 0 \(h\): refused the command \(HTTP 403 NOPERM .*lacks permission$/,
    );
    expect(reply("ERR unknown command").kind).toBe("server");
  });

  it("a network error without a code keeps its cause's message, masked like any message", () => {
    const badPort = new TypeError("fetch failed", { cause: new Error("bad port") });
    expect(classify(0, "h:1", badPort, undefined).message).toBe(
      "node 0 (h:1): unreachable (fetch failed: bad port)",
    );
    const secret = "AX1bQ2cR3dS4eT5fU6gV7hW8iX9jY0kZ";
    const echoed = new TypeError("fetch failed", {
      cause: new Error(`getaddrinfo ENOTFOUND h?_token=${secret}`),
    });
    const message = classify(0, "h", echoed, undefined).message;
    expect(message).toBe(
      "node 0 (h): unreachable (fetch failed: getaddrinfo ENOTFOUND h?_token=***)",
    );
    // No cause at all: the error's own name and message, as before.
    expect(classify(0, "h", new TypeError("fetch failed"), undefined).message).toBe(
      "node 0 (h): unreachable (TypeError: fetch failed)",
    );
  });

  it("normalizeUrl", () => {
    expect(normalizeUrl("HTTPS://Eu1.Upstash.io/")).toBe("https://eu1.upstash.io");
    expect(normalizeUrl("http://127.0.0.1:8080/base//?x=1#f")).toBe("http://127.0.0.1:8080/base");
    expect(normalizeUrl("https://a.io:443")).toBe("https://a.io");
    expect(normalizeUrl("ftp://a.io")).toBeUndefined();
    expect(normalizeUrl("nope")).toBeUndefined();
  });
});
