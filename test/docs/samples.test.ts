/**
 * Every TypeScript sample of README.md and docs/*.md compiles against the library's sources (see
 * ./samples.ts for the `<!-- sample: … -->` convention that declares what a sample leaves to the
 * reader's own code).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runnableSamples, stubsOf } from "./run";
import { allSamples, checkSamples, ENTRY_SOURCES, extractSamples, ROOT } from "./samples";

describe("documentation samples", () => {
  it("maps every package entry point to its source", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      name: string;
      exports: Record<string, unknown>;
    };
    const entries = Object.keys(manifest.exports)
      .filter((subpath) => subpath !== "./package.json")
      .map((subpath) => (subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`));
    expect(Object.keys(ENTRY_SOURCES).sort()).toEqual(entries.sort());
  });

  it("extracts blocks with their prelude, environment and skip reason", () => {
    const markdown = [
      "text",
      "<!-- sample: declare const a: number; -->",
      "",
      "```ts",
      "a + 1;",
      "```",
      "<!-- sample workers:",
      "declare const env: Env;",
      "-->",
      "```ts",
      "env;",
      "```",
      "<!-- sample skip: shows a fragment -->",
      "```ts",
      "…",
      "```",
      "```sh",
      "npm i",
      "```",
      "```ts",
      "const b = 2;",
      "```",
    ].join("\n");
    expect(extractSamples("X.md", markdown)).toEqual([
      { file: "X.md", line: 5, code: "a + 1;", prelude: "declare const a: number;", env: "node" },
      { file: "X.md", line: 11, code: "env;", prelude: "declare const env: Env;", env: "workers" },
      { file: "X.md", line: 15, code: "…", prelude: "", env: "node", skip: "shows a fragment" },
      { file: "X.md", line: 21, code: "const b = 2;", prelude: "", env: "node" },
    ]);
  });

  it("reports a sample's error at its line in the Markdown file", () => {
    const [sample] = extractSamples(
      "X.md",
      [
        "<!-- sample: declare const a: number; -->",
        "```ts",
        "",
        "const s: string = a;",
        "```",
      ].join("\n"),
    );
    if (sample === undefined) throw new Error("no sample");
    const errors = checkSamples([sample]);
    expect(errors.map((e) => e.where)).toEqual(["X.md:4"]);
    expect(errors[0]?.message).toMatch(/not assignable to type 'string'/);
  });

  it("every ```ts block of README.md and docs/*.md typechecks", () => {
    const samples = allSamples();
    expect(samples.length).toBeGreaterThanOrEqual(10);
    const skipped = samples.filter((s) => s.skip !== undefined);
    // Skips must stay rare and say why.
    expect(skipped.length).toBeLessThanOrEqual(2);
    for (const s of skipped) expect(s.skip, `${s.file}:${s.line}`).toMatch(/\w{3,}/);
    const errors = checkSamples(samples).map((e) => `${e.where}: ${e.message}`);
    expect(errors).toEqual([]);
  }, 120_000);
});

describe("documentation samples as files to run", () => {
  it("reads the file and command of a sample's first lines; a prelude becomes stubs of business functions only", () => {
    const markdown = [
      "<!-- sample: declare function chargeCard(input: unknown): Promise<object>; -->",
      "```ts",
      "// server.ts — run: bun server.ts   or: deno serve --port 3000 server.ts",
      "await chargeCard(1);",
      "```",
      "```ts",
      "// handler.mts — try it:",
      "//   npx tsx -e 'import(\"./handler.mts\")'",
      "```",
      "```ts",
      "// transfer.mts — run: npx tsx transfer.mts (EDGELOCK_NODES set)",
      "```",
      "```ts",
      "const unnamed = 1;",
      "```",
    ].join("\n");
    const runnable = runnableSamples(extractSamples("X.md", markdown));
    expect(runnable.map(({ file, command }) => [file, command])).toEqual([
      ["server.ts", "bun server.ts"],
      ["handler.mts", `npx tsx -e 'import("./handler.mts")'`],
      ["transfer.mts", "npx tsx transfer.mts"],
    ]);
    expect(runnable[0]?.source.split("\n")[0]).toMatch(/^async function chargeCard\(/);
    expect(() => stubsOf('import { Hono } from "hono"; declare const app: Hono;')).toThrow(
      /declares more than a business function/,
    );
  });

  it("every prelude of README.md and docs/*.md declares business functions only", () => {
    for (const sample of allSamples()) {
      expect(() => stubsOf(sample.prelude), `${sample.file}:${sample.line}`).not.toThrow();
    }
  });
});
