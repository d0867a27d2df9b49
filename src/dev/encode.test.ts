import { describe, expect, it } from "vitest";
import { encodeEntries, encodeEntry, encodeValue } from "./encode";

const b = (s: string | number[]) => (typeof s === "string" ? Buffer.from(s) : Buffer.from(s));

describe("encodeValue", () => {
  it("writes integers (decimal strings under stringNumbers) verbatim, even beyond 2^53", () => {
    expect(encodeValue("9007199254740993", false)).toBe("9007199254740993");
    expect(encodeValue("-12", true)).toBe("-12");
    expect(encodeValue(7, false)).toBe("7");
  });

  it("base64-encodes raw bytes at every depth, OK included", () => {
    const reply = [b("OK"), [b([0xff, 0x00]), null, "3"], b("")];
    expect(encodeValue(reply, true)).toBe('["T0s=",["/wA=",null,3],""]');
  });

  it("writes UTF-8 text without the header, invalid bytes as U+FFFD", () => {
    expect(encodeValue(b('é"\n'), false)).toBe('"é\\"\\n"');
    expect(encodeValue(b([0x61, 0xff]), false)).toBe('"a\uFFFD"');
  });

  it("turns a nested error into a string, and a top-level one into an error entry", () => {
    expect(encodeValue([new Error("boom")], true)).toBe('["Ym9vbQ=="]');
    expect(encodeEntry(new Error("NOSCRIPT x"), true)).toBe('{"error":"NOSCRIPT x"}');
  });
});

describe("encodeEntries", () => {
  it("keeps one entry per reply, results and errors without the other key", () => {
    expect(encodeEntries([b("v"), new Error("ERR e"), null], false)).toBe(
      '[{"result":"v"},{"error":"ERR e"},{"result":null}]',
    );
  });
});
