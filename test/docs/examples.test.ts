/**
 * The complete test files that docs/TESTING-HANDLERS.md shows are the ones the suite runs: each
 * block after `<!-- example: <path> -->` is that file, with the package's entry points
 * (`"edgelock/testing"`) where the file imports their sources (`"../../src/testing/index"`).
 * test/quickstart.test.ts runs the same blocks from the packed tarball with `npx vitest run`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { vitestExamples as examples } from "./run";
import { ENTRY_SOURCES, ROOT } from "./samples";

const DOC = "docs/TESTING-HANDLERS.md";

/** A test file as the user would write it: sources replaced by the entry points. */
function asUserCode(path: string): string {
  let code = readFileSync(join(ROOT, path), "utf8").trimEnd();
  for (const [entry, source] of Object.entries(ENTRY_SOURCES)) {
    code = code.replaceAll(`"../../${source.replace(/\.ts$/, "")}"`, `"${entry}"`);
  }
  return code;
}

describe(`the examples of ${DOC}`, () => {
  const found = examples(readFileSync(join(ROOT, DOC), "utf8"));

  it("show the Hono and the Lambda test files", () => {
    expect(found.map(([path]) => path)).toEqual([
      "test/testing/example-hono.test.ts",
      "test/testing/example-lambda.test.ts",
    ]);
  });

  it.each(found)(
    "%s is the file the suite runs, importing only edgelock's entry points",
    (path, block) => {
      expect(block).toBe(asUserCode(path));
      expect(block).not.toContain("../../src");
    },
  );
});
