/**
 * The shape of src/lock's functions: none takes more than four positional parameters. Rounds take
 * one spec object (`RoundSpec` in `src/lock/core.ts`) with named durations, so `ttl` and
 * `timeoutMs` cannot be swapped at a call without the type check or a reader noticing.
 * Read with the TypeScript compiler's parser: every function, method, constructor and arrow
 * function of every source file in src/lock and its folders (src/lock/wait; tests excluded).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const LOCK = fileURLToPath(new URL("../../src/lock", import.meta.url));
const MAX_PARAMETERS = 4;

/** `file:line name (n)` of every function-like node in `file` with more than the maximum. */
function overlong(file: string): string[] {
  const text = readFileSync(join(LOCK, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "parameters" in node) {
      const count = node.parameters.length;
      if (count > MAX_PARAMETERS) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        const name = node.name?.getText(source) ?? "(anonymous)";
        found.push(`${file}:${line} ${name} (${count})`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("src/lock's functions", () => {
  it(`take at most ${MAX_PARAMETERS} positional parameters each`, () => {
    const files = readdirSync(LOCK, { recursive: true, encoding: "utf8" }).filter(
      (f) => f.endsWith(".ts") && !f.endsWith(".test.ts"),
    );
    expect(files).toContain("wait/pacing.ts");
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap(overlong)).toEqual([]);
  });
});
