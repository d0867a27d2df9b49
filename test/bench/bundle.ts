/**
 * Section 5: bundle size. Every edgelock entry point that exists, and the two peers' package
 * entries, bundled the same way with esbuild (bundle, ESM, platform neutral, minified; main fields
 * `module`, `main`), gzipped at level 9. External: `@upstash/redis` and `hono` (peer dependencies
 * the app already ships), `ioredis` (node-redlock's client), and Node built-ins (node-redlock
 * imports `crypto` and `events`; they cannot be bundled for a neutral platform). The external
 * imports left in each bundle are listed, so a Node-only import in edgelock would show.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { type BuildOptions, build } from "esbuild";
import { fengariAnyRuntime } from "../../scripts/fengari-plugin";

export interface BundleRow {
  readonly id: string;
  readonly entry: string;
  readonly minBytes: number;
  readonly gzipBytes: number;
  readonly externalImports: readonly string[];
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const EDGELOCK_ENTRIES: readonly { id: string; path: string }[] = [
  { id: "edgelock (core)", path: "src/index.ts" },
  { id: "edgelock/hono", path: "src/adapters/hono/index.ts" },
  { id: "edgelock/lambda", path: "src/adapters/lambda/index.ts" },
  { id: "edgelock/workers", path: "src/adapters/workers/index.ts" },
  { id: "edgelock/testing", path: "src/testing/index.ts" },
];

/** What an app that imports one thing pays after tree-shaking. */
export const IMPORTS: readonly { id: string; contents: string }[] = [
  {
    id: "import { createLocks } from edgelock",
    contents: 'export { createLocks } from "./src/index.ts";',
  },
  // What a concurrency limit adds to an app's locks: the semaphore, its scripts and its wait.
  {
    id: "import { createLocks, semaphore } from edgelock",
    contents: 'export { createLocks, semaphore } from "./src/index.ts";',
  },
  // The lock middleware alone: `limit()` beside it in the entry must not reach it.
  {
    id: "import { lock } from edgelock/hono",
    contents: 'export { lock } from "./src/adapters/hono/index.ts";',
  },
];

const PEERS: readonly { id: string; contents: string }[] = [
  { id: "@upstash/lock", contents: 'export * from "@upstash/lock";' },
  { id: "redlock", contents: 'export * from "redlock"; export { default } from "redlock";' },
];

/** How every row is bundled (the size guard bundles the same way). */
export const COMMON: BuildOptions = {
  bundle: true,
  format: "esm",
  platform: "neutral",
  mainFields: ["module", "main"],
  minify: true,
  write: false,
  metafile: true,
  logLevel: "silent",
  external: ["@upstash/redis", "hono", "ioredis", "crypto", "events", "node:*"],
  // edgelock/testing bundles its Lua VM as the published build does (tsup.config.ts).
  plugins: [fengariAnyRuntime],
};

async function measure(id: string, entry: string, options: BuildOptions): Promise<BundleRow> {
  const result = await build({ ...COMMON, ...options, outfile: "out.js" });
  const output = result.outputFiles?.[0];
  if (output === undefined) throw new Error(`${id}: esbuild produced no output`);
  const meta = Object.values(result.metafile?.outputs ?? {})[0];
  const externalImports = [
    ...new Set((meta?.imports ?? []).filter((i) => i.external).map((i) => i.path)),
  ].sort();
  return {
    id,
    entry,
    minBytes: output.contents.byteLength,
    gzipBytes: gzipSync(output.contents, { level: 9 }).byteLength,
    externalImports,
  };
}

/**
 * Sizes of every edgelock entry point and of the tree-shaken imports (`IMPORTS`): what the size
 * guard (`test/size.test.ts`) holds to its budgets.
 *
 * @example
 * const rows = await edgelockBundles(); // [{ id: "edgelock (core)", gzipBytes: 4321, ... }, ...]
 */
export async function edgelockBundles(): Promise<BundleRow[]> {
  const rows: BundleRow[] = [];
  for (const { id, path } of EDGELOCK_ENTRIES) {
    if (!existsSync(`${ROOT}${path}`)) continue;
    rows.push(await measure(id, path, { entryPoints: [`${ROOT}${path}`] }));
  }
  for (const { id, contents } of IMPORTS) {
    rows.push(
      await measure(id, "tree-shaken import", {
        stdin: { contents, resolveDir: ROOT, loader: "ts" },
      }),
    );
  }
  return rows;
}

/**
 * Sizes of every existing edgelock entry point and of the peers.
 *
 * @example
 * const rows = await runBundle(); // [{ id: "edgelock (core)", gzipBytes: 4321, ... }, ...]
 */
export async function runBundle(): Promise<BundleRow[]> {
  const rows = await edgelockBundles();
  for (const { id, contents } of PEERS) {
    rows.push(
      await measure(id, `package "${id}"`, {
        stdin: { contents, resolveDir: ROOT, loader: "js" },
      }),
    );
  }
  return rows;
}
