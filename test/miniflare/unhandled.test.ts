/**
 * No rejection left unhandled in workerd when the lock nodes answer nothing (docs/SAFETY.md §6c):
 * `unhandled.worker.ts`, bundled with esbuild and run by Miniflare, counts the isolate's
 * `unhandledrejection` events while a failed `acquire`, Hono `lock()` and `idempotency()` over
 * `lock()` (contract C12) run against closed ports, background work included.
 *
 * With verbose logging workerd also prints, for every failed subrequest, caught or not,
 * `uncaught exception; source = Uncaught (in promise); stack = Error: Network connection lost.`
 * (its own fetch internals at info level, which the workers pool shows). Those lines are not
 * unhandled rejections: a caught `fetch` prints one, a failed acquire one per refused connection,
 * and none of them fires `unhandledrejection`.
 */
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });

let mf: Miniflare;
/** Everything workerd wrote to stdout and stderr. */
let runtimeOutput = "";

beforeAll(async () => {
  const entry = fileURLToPath(new URL("./unhandled.worker.ts", import.meta.url));
  const bundle = buildSync({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    write: false,
  });
  mf = new Miniflare({
    modules: [
      { type: "ESModule", path: "worker.mjs", contents: bundle.outputFiles[0]?.text ?? "" },
    ],
    compatibilityDate: "2025-09-01",
    verbose: true,
    bindings: {
      EDGELOCK_NODES: JSON.stringify(dev.cluster.nodes),
      LOCK_PREFIX: `mf-unhandled:${crypto.randomUUID()}:`,
      REQUEST_TIMEOUT_MS: "500",
    },
    handleRuntimeStdio(stdout, stderr) {
      stdout.on("data", (chunk) => {
        runtimeOutput += String(chunk);
      });
      stderr.on("data", (chunk) => {
        runtimeOutput += String(chunk);
      });
    },
  });
  await mf.ready;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
});

interface Ran {
  readonly result: string | number;
  readonly unhandled: readonly string[];
}

async function scenario(name: string): Promise<Ran> {
  const res = await mf.dispatchFetch(`http://worker.test/${name}`);
  return (await res.json()) as Ran;
}

const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;

describe("workerd: no unhandled rejection when every lock node is unreachable", () => {
  it("the listener sees a deliberate unhandled rejection (it counts what it should)", async () => {
    expect(await scenario("rejection")).toEqual({
      result: "rejected",
      unhandled: ["Error: a deliberate unhandled rejection"],
    });
  });

  it("a failed acquire, lock() with an onError of 200, idempotency() over it (C12): none", async () => {
    expect(await scenario("acquire")).toEqual({ result: "QuorumError", unhandled: [] });
    expect(await scenario("lock")).toEqual({ result: 200, unhandled: [] });
    expect(await scenario("idempotency-over-lock")).toEqual({ result: 200, unhandled: [] });
  });

  it("idempotency() over a lock() whose onError throws: hono's 500, none", async () => {
    expect(await scenario("idempotency-over-lock-throws")).toEqual({
      result: 500,
      unhandled: [],
    });
  });

  it("workerd's 'Uncaught (in promise)' info line comes with every refused connection, caught or not", async () => {
    const before = runtimeOutput.length;
    expect(await scenario("fetch")).toEqual({ result: "Error", unhandled: [] });
    const caughtFetch = runtimeOutput.slice(before);
    const lines = /source = Uncaught \(in promise\); stack = Error: Network connection lost/g;
    const refused = /connect\(\): Connection refused/g;
    expect(count(caughtFetch, refused)).toBeGreaterThan(0);
    expect(count(caughtFetch, lines)).toBe(count(caughtFetch, refused));
    // Over every scenario so far: one line per refused connection, none more.
    expect(count(runtimeOutput, lines)).toBe(count(runtimeOutput, refused));
  });
});
