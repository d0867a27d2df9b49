import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SCRIPTS } from "../scripts";
import { sha1 } from "./sha1";

const reference = (text: string) => createHash("sha1").update(text).digest("hex");

describe("sha1", () => {
  it("matches the standard test vectors", () => {
    expect(sha1("")).toBe("da39a3ee5e6b4b0d3255bfef95601890afd80709");
    expect(sha1("abc")).toBe("a9993e364706816aba3e25717850c26c9cd0d89d");
  });

  it("agrees with node:crypto across every padding boundary and on UTF-8", () => {
    for (let n = 0; n <= 200; n++) {
      const text = "é€x".repeat(n).slice(0, n);
      expect(sha1(text), `length ${n}`).toBe(reference(text));
    }
  });

  it("gives each of edgelock's scripts the SHA-1 it is published under", () => {
    for (const script of SCRIPTS) expect(sha1(script.lua)).toBe(script.sha1);
  });
});
