/**
 * What `npm install edgelock` gets: the tarball's files (built, no source maps, LICENSE, the bin
 * launcher) and a manifest without `prepare`, with ioredis as an optional peer only.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { IOREDIS_MISSING, loadNodeModule } from "../src/dev/optional";

interface PackEntry {
  readonly files: { readonly path: string }[];
  readonly size: number;
}

describe("the published package", () => {
  it("manifest: no prepare script, a prepack build, ioredis an optional peer, never a dependency", () => {
    const manifest = JSON.parse(readFileSync("package.json", "utf8")) as {
      scripts: Record<string, string>;
      dependencies?: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional: boolean }>;
      bin: Record<string, string>;
    };
    const { scripts } = manifest;
    expect(scripts.prepare).toBeUndefined();
    expect(scripts.prepack).toBe("tsup");
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.peerDependencies.ioredis).toBeDefined();
    expect(manifest.peerDependenciesMeta.ioredis).toEqual({
      optional: true,
    });
    expect(manifest.bin).toEqual({ edgelock: "bin/edgelock.mjs" });
  });

  it("tarball: the build, LICENSE, README and the bin launcher; no source maps, no sources", () => {
    execFileSync("npx", ["tsup"], { stdio: "ignore" });
    const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const [pack] = JSON.parse(out) as PackEntry[];
    const paths = (pack?.files ?? []).map((f) => f.path);
    for (const path of ["LICENSE", "README.md", "package.json", "bin/edgelock.mjs"]) {
      expect(paths).toContain(path);
    }
    for (const entry of ["index", "hono/index", "lambda/index", "workers/index", "dev/index"]) {
      expect(paths).toContain(`dist/${entry}.js`);
      expect(paths).toContain(`dist/${entry}.cjs`);
      expect(paths).toContain(`dist/${entry}.d.ts`);
    }
    expect(paths).toContain("dist/dev/cli.js");
    expect(paths.filter((p) => p.endsWith(".map"))).toEqual([]);
    expect(paths.filter((p) => p.startsWith("src/") || p.startsWith("test/"))).toEqual([]);
    // Packed size, as a guard against growth (418 KB with the 15 source maps it used to carry).
    expect(pack?.size).toBeLessThan(250_000);
  }, 60_000);
});

describe("the dev cluster without ioredis", () => {
  it("says what to install instead of a module-not-found stack", async () => {
    const missing = Object.assign(new Error("Cannot find package 'ioredis' imported from x"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    const error = (await loadNodeModule(() => Promise.reject(missing)).catch((e) => e)) as Error;
    expect(error.name).toBe("DevClusterError");
    expect(error.message).toBe(IOREDIS_MISSING);
    expect(IOREDIS_MISSING).toBe(
      "edgelock dev needs the optional package ioredis: npm install --save-dev ioredis",
    );
    // Any other failure passes through unchanged.
    const other = new Error("boom");
    expect(await loadNodeModule(() => Promise.reject(other)).catch((e) => e)).toBe(other);
  });
});
