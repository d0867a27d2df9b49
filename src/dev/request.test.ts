import { describe, expect, it } from "vitest";
import { BadRequestError, parseCommand, parseCommandList, parseJson } from "./request";

describe("parseCommand", () => {
  it("keeps the name verbatim and stringifies numbers and booleans like JSON.stringify", () => {
    expect(parseCommand(["SeT", "k", 1.5, 1e21, true, ""], "body")).toEqual({
      name: "SeT",
      lower: "set",
      args: ["k", "1.5", "1e+21", "true", ""],
    });
  });

  it("refuses null, objects, arrays, empty commands and non-string names", () => {
    for (const bad of [["set", "k", null], ["set", { a: 1 }], ["set", ["x"]], [], [1], "get"]) {
      expect(() => parseCommand(bad, "body")).toThrow(BadRequestError);
    }
  });

  it("refuses commands that would wedge a shared connection", () => {
    for (const bad of [
      ["SUBSCRIBE", "c"],
      ["select", 1],
      ["blpop", "k", 0],
      ["xread", "block", 0, "streams", "s", "$"],
      ["client", "REPLY", "off"],
      ["multi"],
    ]) {
      expect(() => parseCommand(bad, "body")).toThrow(/not supported/);
    }
    expect(parseCommand(["xread", "streams", "s", "0"], "body").lower).toBe("xread");
    expect(parseCommand(["client", "setname", "x"], "body").lower).toBe("client");
  });
});

describe("parseCommandList and parseJson", () => {
  it("needs a non-empty array of command arrays and names the bad entry", () => {
    expect(parseCommandList([["get", "a"], ["ping"]])).toHaveLength(2);
    expect(() => parseCommandList([])).toThrow(BadRequestError);
    expect(() => parseCommandList([["get", "a"], "ping"])).toThrow(/command 1/);
    expect(() => parseJson(Buffer.from("{"))).toThrow(/JSON/);
  });
});
