/**
 * The complete test files that docs/TESTING-HANDLERS.md shows are the ones the suite runs: each
 * block after `<!-- example: <path> -->` is that file, with the package's entry points
 * (`"edgelock/testing"`) where the file imports their sources (`"../../src/testing/index"`).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ENTRY_SOURCES, ROOT } from "./samples";

const DOC = "docs/TESTING-HANDLERS.md";

/** `[path, block]` for every example block of `markdown`. */
function examples(markdown: string): [string, string][] {
  const found: [string, string][] = [];
  for (const match of markdown.matchAll(/<!-- example: (\S+) -->\n```ts\n([\s\S]*?)\n```/g)) {
    found.push([match[1] as string, match[2] as string]);
  }
  return found;
}

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
