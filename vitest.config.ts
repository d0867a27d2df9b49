import { readFileSync } from "node:fs";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig, type Plugin } from "vitest/config";

/**
 * tsx's bundle, loaded by the workers project's global setup, carries the text
 * `sourceMappingURL=data:…;base64,` inside its code: read from disk, vite takes it for a source
 * map, fails to parse it and prints a SyntaxError at every start. Loaded here, it has no map.
 */
const tsxWithoutSourceMap: Plugin = {
  name: "tsx-without-source-map",
  load(id) {
    if (!/\/node_modules\/tsx\/dist\/[^?]*\.m?js$/.test(id)) return null;
    return { code: readFileSync(id, "utf8"), map: null };
  },
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          environment: "node",
          include: ["src/**/*.test.ts", "test/**/*.test.ts"],
          exclude: ["test/workers/**", "node_modules/**"],
          // vitest's default is one worker less than the cores: ONE on a 2-core machine, where most
          // files wait on redis-servers, child processes and timers rather than on the CPU (two
          // files at a time left a third of both cores idle: 310 s; three, 262-275 s).
          // EDGELOCK_TEST_WORKERS overrides (1 gives the serial run, e.g. to tell a timing flake
          // from a bug).
          maxWorkers: Number(process.env.EDGELOCK_TEST_WORKERS ?? 3),
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        // Tests that run inside workerd against functions/worker.ts (wrangler.toml). The global
        // setup runs in Node: it starts a dev cluster and provides its nodes to the bindings.
        plugins: [
          tsxWithoutSourceMap,
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // vitest's own runner inside workerd needs Node.js APIs; the Worker does not
              // (wrangler.toml sets no flags), so the flag is the test pool's alone.
              compatibilityFlags: ["nodejs_compat"],
              bindings: { EDGELOCK_NODES: JSON.stringify(inject("devNodes")) },
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          globalSetup: ["./test/workers/global-setup.ts"],
          // One cluster for all files: faults and request counts must not leak between files.
          fileParallelism: false,
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
    ],
  },
});
