/**
 * The package's entry points as package.json `exports` declares them, each with the source tsup
 * builds it from (tsup.config.ts): one list for the packaging test and the documentation samples,
 * so a new subpath of `exports` (or one tsup does not build) is covered without editing a test.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import tsup from "../../tsup.config";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A condition of `exports`: a file, or nested conditions (`import` → `types`, `default`). */
export type ExportTarget = string | { readonly [condition: string]: ExportTarget };

/** One code entry point of the package. */
export interface PackageEntry {
  /** The subpath of `exports`: `"."`, `"./hono"`, … */
  readonly subpath: string;
  /** What an app imports: `edgelock`, `edgelock/hono`, … */
  readonly specifier: string;
  /** The source tsup builds it from, relative to the root: `src/adapters/hono/index.ts`. */
  readonly source: string;
}

interface Manifest {
  readonly name: string;
  readonly exports: Record<string, ExportTarget>;
}

/** package.json, as it is on disk now. */
export const manifest = (): Manifest =>
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Manifest;

/** tsup's entries across its configs: output name (`hono/index`) → source. */
function tsupEntries(): Record<string, string> {
  if (typeof tsup === "function") throw new Error("tsup.config.ts exports a function");
  const entries: Record<string, string> = {};
  for (const config of Array.isArray(tsup) ? tsup : [tsup]) {
    const { entry } = config;
    if (typeof entry === "object" && !Array.isArray(entry)) Object.assign(entries, entry);
  }
  return entries;
}

/** The ESM file of an entry (`./dist/hono/index.js`): its `import` → `default` condition. */
function esmFile(subpath: string, target: ExportTarget | undefined): string {
  const file =
    typeof target === "object" && typeof target.import === "object"
      ? target.import.default
      : undefined;
  if (typeof file !== "string") throw new Error(`exports["${subpath}"] has no import.default`);
  return file;
}

/**
 * Every code entry point of `exports` (not `./package.json`) with its source.
 *
 * @throws when tsup builds no entry for a subpath of `exports`
 */
export function packageEntries(): PackageEntry[] {
  const { name, exports } = manifest();
  const built = tsupEntries();
  return Object.keys(exports)
    .filter((subpath) => subpath !== "./package.json")
    .map((subpath) => {
      const output = esmFile(subpath, exports[subpath])
        .replace(/^\.\/dist\//, "")
        .replace(/\.js$/, "");
      const source = built[output];
      if (source === undefined)
        throw new Error(`tsup.config.ts builds no "${output}" for exports["${subpath}"]`);
      const specifier = subpath === "." ? name : `${name}/${subpath.slice(2)}`;
      return { subpath, specifier, source };
    });
}
