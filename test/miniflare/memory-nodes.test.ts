/**
 * Memory nodes inside workerd: a Hono app with `lock()` and `idempotency()` on three memory nodes
 * (`memory-nodes.worker.ts`), bundled for the browser platform with fengari made runtime-neutral
 * as the published `edgelock/testing` is, and run by Miniflare without `nodejs_compat`: the Lua
 * VM and the scripts run in workerd with no Node API at all.
 */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fengariAnyRuntime } from "../../scripts/fengari-plugin";

let mf: Miniflare;
let imports: string[] = [];

beforeAll(async () => {
  const entry = fileURLToPath(new URL("./memory-nodes.worker.ts", import.meta.url));
  const bundle = await build({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    write: false,
    metafile: true,
    plugins: [fengariAnyRuntime],
  });
  imports = Object.values(bundle.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
  mf = new Miniflare({
    modules: [
      { type: "ESModule", path: "worker.mjs", contents: bundle.outputFiles[0]?.text ?? "" },
    ],
    compatibilityDate: "2025-09-01",
  });
  await mf.ready;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
});

const post = (path: string, headers: Record<string, string> = {}) =>
  mf.dispatchFetch(`http://worker.test${path}`, { method: "POST", headers });

describe("memory nodes in workerd without nodejs_compat", () => {
  it("the Worker's bundle imports nothing from outside it", () => {
    expect(imports).toEqual([]);
  });

  it("idempotency(): a retry with the same key is replayed, the handler ran once", async () => {
    const first = await post("/invoices/42/charge", { "Idempotency-Key": "k-1" });
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ invoice: "42", charge: 1 });
    const retry = await post("/invoices/42/charge", { "Idempotency-Key": "k-1" });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("Idempotency-Replayed")).toBe("true");
    expect(await retry.json()).toEqual({ invoice: "42", charge: 1 });
  });

  it("lock(): 409 while a crashed holder's lease runs, 200 once the nodes' clock passed it", async () => {
    expect((await post("/reports/7/rebuild")).status).toBe(200);
    expect((await post("/hold/7")).status).toBe(200);
    const pttl = await mf.dispatchFetch("http://worker.test/pttl/lock:report:7");
    expect(await pttl.json()).toEqual([10_000, 10_000, 10_000]);
    const busy = await post("/reports/7/rebuild");
    expect(busy.status).toBe(409);
    await busy.arrayBuffer();
    expect((await post("/advance?ms=10001")).status).toBe(204);
    expect((await post("/reports/7/rebuild")).status).toBe(200);
  });

  it("a user's script runs as in Redis 7's Lua 5.1 there too: integer replies, protected globals, sha1hex refused", async () => {
    const run = async (source: string) =>
      (
        await mf.dispatchFetch("http://worker.test/script", { method: "POST", body: source })
      ).json();
    expect(
      await run('return "job-" .. redis.call("INCR", KEYS[1]) .. string.format(" %d", 3.7)'),
    ).toEqual({
      value: "job-1 3",
    });
    expect(await run("x = 1")).toEqual({
      error: expect.stringMatching(
        /^ERR user_script:1: Attempt to modify a readonly table script: /,
      ),
      name: "MemoryNodeError",
    });
    expect(await run('return redis.sha1hex("a")')).toEqual({
      error: expect.stringContaining("memory nodes do not model 'redis.sha1hex'"),
      name: "UnsupportedCommandError",
    });
  });
});
