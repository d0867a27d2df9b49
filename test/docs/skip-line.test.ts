/**
 * The skipped-trigger log line README.md quotes for its `wrangler dev` walk-through is the line
 * `dedupeScheduled` prints: the same words, and the seconds a 24 h done marker has left one to two
 * seconds after the first run wrote it (whole seconds, rounded up).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { skipLine } from "../../src/dedupe/skip-log";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");

describe("README's skipped-trigger log line", () => {
  it("is what skipLine prints for the second delivery of the README's occurrence", () => {
    const quoted = /The second logs `(edgelock: skipped scheduled job [^`]+)`/.exec(README)?.[1];
    expect(quoted, "the README quotes the line").toBeDefined();
    const line = (quoted as string).replace(/\s*\n\s*/g, " ");
    const key = "scheduled:daily-digest:0 3 * * *:1767236400000";
    const day = 86_400_000;
    // Read 1.2 s and 1.9 s after the marker was written: both print 86399.
    for (const elapsed of [1_200, 1_900]) {
      expect(skipLine(key, "done", day - elapsed)).toBe(line);
    }
    // Within the first second it still says 86400; the README does not promise that.
    expect(skipLine(key, "done", day - 300)).toContain("stays 86400 s more");
  });
});
