/**
 * What `npm install edgelock` gets: the tarball's files (built, no source maps, LICENSE, the bin
 * launcher) and a manifest without `prepare`, with ioredis as an optional peer only; every entry
 * point of `exports` resolves with types under every TypeScript module resolution (attw) and the
 * manifest passes publint, both run offline on the packed tarball. The main entry bundles nothing of
 * the memory nodes, and edgelock/testing nothing Node-only.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { fengariAnyRuntime } from "../scripts/fengari-plugin";
import { IOREDIS_MISSING, loadNodeModule } from "../src/dev/optional";
import tsup from "../tsup.config";
import { type ExportTarget, packageEntries } from "./support/entries";

interface PackEntry {
  readonly filename: string;
  readonly files: { readonly path: string }[];
  readonly size: number;
}

interface Manifest {
  readonly exports: Record<string, ExportTarget>;
  readonly typesVersions?: Record<string, Record<string, string[]>>;
  readonly repository?: { type: string; url: string };
  readonly homepage?: string;
  readonly bugs?: { url: string };
}

const manifest = (): Manifest => JSON.parse(readFileSync("package.json", "utf8")) as Manifest;

/** Every file an `exports` target names, as tarball paths (`dist/hono/index.d.ts`). */
function exportedFiles(target: ExportTarget): string[] {
  if (typeof target === "string") return [target.replace(/^\.\//, "")];
  return Object.values(target).flatMap(exportedFiles);
}

/** The code entry points of `exports` (`.`, `./hono`, …), without `./package.json`. */
const codeEntries = (): string[] => packageEntries().map((entry) => entry.subpath);

/** The build, then `npm pack` into a fresh folder; the tarball's path and what npm listed. */
function packTarball(): { dir: string; tarball: string; pack: PackEntry } {
  execFileSync("npx", ["tsup"], { stdio: "ignore" });
  const dir = mkdtempSync(join(tmpdir(), "edgelock-pack-"));
  const out = execFileSync(
    "npm",
    ["pack", "--json", "--ignore-scripts", "--pack-destination", dir],
    { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
  );
  const [pack] = JSON.parse(out) as PackEntry[];
  if (pack === undefined) throw new Error("npm pack listed nothing");
  return { dir, tarball: join(dir, pack.filename), pack };
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
    // fengari (the Lua VM of memory nodes) is a devDependency bundled into the entries that use
    // it (scripts/fengari-plugin.ts): installing edgelock installs nothing else.
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.peerDependencies.ioredis).toBeDefined();
    expect(manifest.peerDependenciesMeta.ioredis).toEqual({
      optional: true,
    });
    expect(manifest.bin).toEqual({ edgelock: "bin/edgelock.mjs" });
  });

  it("manifest: repository, homepage and bugs point at the project", () => {
    const { repository, homepage, bugs } = manifest();
    expect(repository).toEqual({
      type: "git",
      url: "git+https://github.com/edgelock/edgelock.git",
    });
    expect(homepage).toBe("https://github.com/edgelock/edgelock#readme");
    expect(bugs).toEqual({ url: "https://github.com/edgelock/edgelock/issues" });
  });

  it("manifest: tsup builds every subpath of exports from a source of src/, and no other library entry", () => {
    const entries = packageEntries();
    expect(entries.map((e) => e.subpath)).toContain(".");
    for (const { source } of entries) {
      expect(source).toMatch(/^src\/.*\.ts$/);
      expect(existsSync(source), source).toBe(true);
    }
    const built = (Array.isArray(tsup) ? tsup : [tsup]).flatMap((config) =>
      typeof config === "function" ? [] : Object.values(config.entry ?? {}),
    );
    // The CLI is the one build that is no library entry: the `bin` launcher runs it.
    expect(built.filter((source) => source !== "src/dev/cli.ts").sort()).toEqual(
      entries.map((e) => e.source).sort(),
    );
  });

  it("manifest: typesVersions maps every subpath of exports to its types (moduleResolution node10)", () => {
    const { exports, typesVersions } = manifest();
    const expected: Record<string, string[]> = {};
    for (const subpath of codeEntries().filter((s) => s !== ".")) {
      const target = exports[subpath] as { import: { types: string } };
      expected[subpath.slice(2)] = [target.import.types];
    }
    expect(Object.keys(expected).length).toBeGreaterThan(0);
    expect(typesVersions).toEqual({ "*": expected });
  });

  it("tarball: every file exports names, LICENSE, README and the bin launcher; no source maps, no sources; attw and publint find nothing", () => {
    const { dir, tarball, pack } = packTarball();
    try {
      const paths = pack.files.map((f) => f.path);
      for (const path of ["LICENSE", "README.md", "package.json", "bin/edgelock.mjs"]) {
        expect(paths).toContain(path);
      }
      const { exports } = manifest();
      const files = codeEntries().flatMap((subpath) => exportedFiles(exports[subpath] ?? {}));
      expect(files).toContain("dist/index.js");
      expect(files).toContain("dist/hono/index.d.cts");
      for (const file of files) expect(paths).toContain(file);
      expect(paths).toContain("dist/dev/cli.js");
      expect(paths.filter((p) => p.endsWith(".map"))).toEqual([]);
      expect(paths.filter((p) => p.startsWith("src/") || p.startsWith("test/"))).toEqual([]);
      // Packed size, as a guard against growth (418 KB with the 15 source maps it used to carry;
      // 272 KB before edgelock/testing, whose Lua VM adds 80 KB per module format, ESM and CJS,
      // and 80 KB more in the CLI's own build, for the in-memory nodes of `edgelock dev`; 574 KB
      // once memory nodes ran users' Lua as Redis's Lua 5.1: number formatting, the read-only
      // sandbox, `redis.*` and `cjson`, about 4.5 KB in each of those three builds; 593 KB with
      // the wait queue's scripts, client and memory nodes' hashes; 627 KB once the semaphore,
      // `limit()` and `withLimit` were exported, in both module formats and their types).
      expect(pack.size).toBeLessThan(650_000);
      // edgelock/testing carries its Lua VM: it imports only edgelock's own chunks, and nothing
      // in it reads `process` (which workerd without nodejs_compat does not have).
      for (const file of ["dist/testing/index.js", "dist/testing/index.cjs"]) {
        const code = readFileSync(file, "utf8");
        const specifiers = [...code.matchAll(/(?:from |require\()['"]([^'"]+)['"]/g)].map(
          (m) => m[1],
        );
        expect(specifiers.length, file).toBeGreaterThan(0);
        expect(
          specifiers.filter((s) => !s?.startsWith("../")),
          file,
        ).toEqual([]);
        expect(code, file).not.toMatch(/\bprocess\.|\bnode:/);
      }

      // Are the types wrong: every entry point under node10, node16 (CJS and ESM) and bundler.
      // --no-definitely-typed: nothing is fetched from the registry, the check runs offline.
      const attw = spawnSync(
        "npx",
        ["attw", tarball, "--format", "json", "--no-definitely-typed"],
        { encoding: "utf8" },
      );
      const report = JSON.parse(attw.stdout) as {
        analysis: {
          problems: unknown[];
          entrypoints: Record<
            string,
            { resolutions: Record<string, { resolution?: { fileName: string } }> }
          >;
        };
      };
      expect(report.analysis.problems).toEqual([]);
      expect(Object.keys(report.analysis.entrypoints).sort()).toEqual(Object.keys(exports).sort());
      for (const subpath of codeEntries()) {
        const { resolutions } = report.analysis.entrypoints[subpath] ?? { resolutions: {} };
        expect(Object.keys(resolutions).sort()).toEqual([
          "bundler",
          "node10",
          "node16-cjs",
          "node16-esm",
        ]);
        for (const [kind, { resolution }] of Object.entries(resolutions)) {
          expect(resolution?.fileName, `${subpath} under ${kind}`).toMatch(/\.d\.c?ts$/);
        }
      }
      expect(attw.status).toBe(0);

      const publint = spawnSync("npx", ["publint", "run", tarball, "--strict"], {
        encoding: "utf8",
      });
      expect(publint.stdout).toContain("All good!");
      expect(publint.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe("the entries' contents", () => {
  /** The source files esbuild bundles for `contents` (resolved from the repository's root). */
  async function inputsOf(contents: string): Promise<string[]> {
    const result = await build({
      stdin: { contents, resolveDir: process.cwd(), loader: "ts" },
      bundle: true,
      format: "esm",
      platform: "neutral",
      mainFields: ["module", "main"],
      write: false,
      metafile: true,
      logLevel: "silent",
      external: ["@upstash/redis", "hono"],
      plugins: [fengariAnyRuntime],
    });
    expect(
      Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path)),
    ).toEqual(contents.includes("testing") ? [] : ["@upstash/redis/cloudflare"]);
    return Object.keys(result.metafile.inputs);
  }

  it("import { createLocks } from edgelock bundles no file of the memory nodes nor fengari", async () => {
    const inputs = await inputsOf('export { createLocks } from "./src/index.ts";');
    expect(inputs.some((p) => p.startsWith("src/lock/"))).toBe(true);
    expect(inputs.filter((p) => /src\/(memory|testing)\/|fengari/.test(p))).toEqual([]);
  });

  it("edgelock/testing bundles for a neutral platform with no import left (nothing Node-only)", async () => {
    const inputs = await inputsOf('export * from "./src/testing/index.ts";');
    expect(inputs.some((p) => p.includes("fengari"))).toBe(true);
  });
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
