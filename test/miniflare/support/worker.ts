/**
 * A test Worker run by Miniflare for one test file: `worker.ts` beside the test, bundled with
 * esbuild for workerd (as wrangler would), started in `beforeAll` after the file's dev cluster and
 * disposed in `afterAll`, with everything workerd writes (stdout, stderr and, on request, its
 * structured logs) collected for the test to read.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll } from "vitest";

/** The running Worker of a test file (valid between `beforeAll` and `afterAll`). */
export interface WorkerUnderTest {
  readonly mf: Miniflare;
  /** Everything workerd wrote so far. */
  output(): string;
}

/**
 * Run the Worker at `entry` for the current test file, with the `bindings` it is given once the
 * dev cluster is up (a function: read in `beforeAll`). `structuredLogs` also collects workerd's
 * own warnings (its structured logs).
 *
 * @example
 * const dev = useDevCluster({ nodes: 3 });
 * const worker = useWorker(new URL("./queue.worker.ts", import.meta.url), () => ({
 *   EDGELOCK_NODES: JSON.stringify(dev.cluster.nodes),
 * }));
 * const response = await worker.mf.dispatchFetch("http://worker.test/");
 */
export function useWorker(
  entry: URL,
  bindings: () => Record<string, string>,
  options: { readonly structuredLogs?: boolean } = {},
): WorkerUnderTest {
  let mf: Miniflare | undefined;
  let output = "";
  beforeAll(async () => {
    const bundle = buildSync({
      entryPoints: [fileURLToPath(entry)],
      bundle: true,
      format: "esm",
      platform: "browser",
      conditions: ["workerd", "worker", "browser"],
      target: "es2022",
      write: false,
    });
    const contents = bundle.outputFiles[0]?.text ?? "";
    const collect = (chunk: unknown) => {
      output += String(chunk);
    };
    mf = new Miniflare({
      modules: [{ type: "ESModule", path: "worker.mjs", contents }],
      compatibilityDate: "2025-09-01",
      verbose: true,
      bindings: bindings(),
      ...(options.structuredLogs === true
        ? {
            structuredWorkerdLogs: true,
            handleStructuredLogs: ({ message }: { message: string }) => collect(`${message}\n`),
          }
        : {}),
      handleRuntimeStdio(stdout, stderr) {
        stdout.on("data", collect);
        stderr.on("data", collect);
      },
    });
    await mf.ready;
  }, 60_000);
  afterAll(async () => {
    await mf?.dispose();
  });
  return {
    get mf() {
      if (mf === undefined) throw new Error("the Worker is not started (use it inside tests)");
      return mf;
    },
    output: () => output,
  };
}
