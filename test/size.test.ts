/**
 * The size guard: every entry point of the package, and `import { createLocks } from "edgelock"`
 * after tree-shaking, bundled as the bench's section 5 bundles them (`test/bench/bundle.ts`:
 * esbuild, ESM, neutral platform, minified, peers external) and gzipped at level 9, stays within
 * its budget in `size-budgets.json` (bytes, min+gzip). Workers parse the bundle at every cold
 * start and edge apps pick a lock library by its weight: growth is a decision, not an accident.
 * Raising a budget is a commit of its own that says what the bytes bought (and docs/PERFORMANCE.md
 * "Bundle size" shows the new figures).
 */
import { readFileSync } from "node:fs";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { SOURCES } from "../scripts/ship-lua";
import { ACQUIRE, COMPLETE, RECORD, RELEASE } from "../src/scripts";
import { SEMAPHORE_SCRIPTS } from "../src/scripts/semaphore";
import { type BundleRow, COMMON, edgelockBundles, IMPORTS } from "./bench/bundle";

const BUDGETS = JSON.parse(
  readFileSync(new URL("./size-budgets.json", import.meta.url), "utf8"),
) as Record<string, number>;

describe("bundle size", () => {
  let rows: BundleRow[] = [];
  beforeAll(async () => {
    rows = await edgelockBundles();
  }, 120_000);

  it("every entry point and the tree-shaken import has a budget, and every budget an entry", () => {
    expect(rows.map((r) => r.id).sort()).toEqual(Object.keys(BUDGETS).sort());
  });

  it.each(Object.entries(BUDGETS))("%s: min+gzip within %d B", (id, budget) => {
    const row = rows.find((r) => r.id === id);
    expect(row, id).toBeDefined();
    const gzip = row?.gzipBytes ?? Number.POSITIVE_INFINITY;
    expect(gzip, `${id}: ${gzip} B min+gzip, budget ${budget} B`).toBeLessThanOrEqual(budget);
  });

  it("import { createLocks } bundles the shipped Lua, without comments and without RECORD or COMPLETE", async () => {
    const [app] = IMPORTS;
    if (app === undefined) throw new Error("no tree-shaken import to bundle");
    const result = await build({
      ...COMMON,
      stdin: { contents: app.contents, resolveDir: process.cwd(), loader: "ts" },
      outfile: "out.js",
    });
    const code = result.outputFiles?.[0]?.text ?? "";
    // A script is in the bundle with its SHA-1 literal and its shipped lines.
    expect(code).toContain(ACQUIRE.sha1);
    expect(code).toContain(RELEASE.sha1);
    expect(code).toContain(ACQUIRE.lua.slice(0, ACQUIRE.lua.indexOf("\n")));
    // Only the Idempotency-Key layer reads records: an app without it does not carry RECORD.
    expect(code).not.toContain(RECORD.sha1);
    // Only done markers (`once()`, scheduled dedupe, Idempotency-Key) write COMPLETE.
    expect(code).not.toContain(COMPLETE.sha1);
    // The semaphore's scripts stay out of an app that only locks.
    for (const script of SEMAPHORE_SCRIPTS) expect(code, script.name).not.toContain(script.sha1);
    // No comment of the commented sources made it into the bundle.
    for (const source of Object.values(SOURCES)) {
      for (const comment of source.match(/-- .*/g) ?? []) expect(code).not.toContain(comment);
    }
    expect(Object.keys(SOURCES).length).toBeGreaterThan(0);
  });
});
