/**
 * An esbuild plugin for bundling fengari (the Lua VM the memory node runs scripts in) so that the
 * result runs on every runtime: Node, Bun, Deno, workerd with or without `nodejs_compat`.
 *
 * fengari picks its platform at load time with `typeof process`: where `process` exists it
 * `require`s fs, tmp, child_process, path and readline-sync (for its io, os, package and debug
 * libraries, which the memory node never opens). A bundler for Workers cannot resolve those, and
 * in a bundled ES module on Node a `require` of them throws. The plugin rewrites those checks to
 * "no `process`", the branch fengari takes in a browser: the Node-only requires become dead code
 * that esbuild drops, and nothing outside the bundle is imported. Its configuration is read from
 * `process.env.FENGARICONF` unconditionally (its own browser build defines it away): none here. Each fengari file is also
 * minified as it is loaded (the Lua VM is half a megabyte of readable source; edgelock's own code
 * stays unminified).
 *
 * Used by tsup.config.ts (the built entries) and by the Miniflare test of memory nodes.
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import { type Plugin, transform } from "esbuild";

/**
 * @example
 * build({ entryPoints: ["src/testing/index.ts"], bundle: true, plugins: [fengariAnyRuntime] });
 */
export const fengariAnyRuntime: Plugin = {
  name: "fengari-any-runtime",
  setup(build) {
    build.onLoad({ filter: /[\\/]fengari[\\/]src[\\/][^\\/]+\.js$/ }, async ({ path }) => {
      const source = (await readFile(path, "utf8"))
        .replaceAll('typeof process !== "undefined"', "false")
        .replaceAll('typeof process === "undefined"', "true")
        .replaceAll("process.env.FENGARICONF", "undefined");
      const { code } = await transform(source, { loader: "js", format: "cjs", minify: true });
      return { contents: code, loader: "js" };
    });
  },
};
