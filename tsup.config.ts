import { defineConfig } from "tsup";
import { fengariAnyRuntime } from "./scripts/fengari-plugin";

// One build for every public entry point (no source maps: the output is not minified, and the
// tarball stays small). Entries appear here as the features behind them land;
// package.json "exports" lists the same set.
export default defineConfig([
  {
    entry: {
      index: "src/index.ts",
      "hono/index": "src/adapters/hono/index.ts",
      "lambda/index": "src/adapters/lambda/index.ts",
      "workers/index": "src/adapters/workers/index.ts",
      "dev/index": "src/dev/index.ts",
      "testing/index": "src/testing/index.ts",
    },
    format: ["esm", "cjs"],
    dts: true,
    clean: true,
    sourcemap: false,
    target: "es2022",
    splitting: true,
    treeshake: true,
    // fengari (a devDependency, so bundled) runs the memory nodes' scripts: see the plugin.
    esbuildPlugins: [fengariAnyRuntime],
  },
  {
    entry: { "dev/cli": "src/dev/cli.ts" },
    format: ["esm"],
    platform: "node",
    target: "node20",
    banner: { js: "#!/usr/bin/env node" },
    sourcemap: false,
    esbuildPlugins: [fengariAnyRuntime],
  },
]);
