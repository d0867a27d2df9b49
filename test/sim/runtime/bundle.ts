/**
 * The library as the simulated clients load it: `entry.ts` bundled once with esbuild into a
 * script each realm evaluates (`realm.ts`), and variants of it with the library's source changed
 * (client-side mutants, `mutants.ts`): each change replaces a passage of one source file, quoted
 * as it is written, so a mutant stays in step with the real source and fails loudly when the
 * passage is gone. A variant is bundled once per process ({@link prepareBundle}, asynchronous:
 * esbuild's plugins run only there) and kept.
 *
 * @module
 */

import { readFileSync } from "node:fs";
import { Script } from "node:vm";
import { type BuildOptions, build, buildSync, type Plugin } from "esbuild";

/** In `file` (a path from the repository's root), `from` replaced by `to`. */
export interface SourcePatch {
  readonly file: string;
  readonly from: string;
  readonly to: string;
}

const ROOT = new URL("../../../", import.meta.url).pathname;
const ENTRY = new URL("./entry.ts", import.meta.url).pathname;
const OPTIONS = {
  entryPoints: [ENTRY],
  bundle: true,
  write: false,
  format: "cjs",
  platform: "neutral",
  target: "es2022",
  external: ["@upstash/redis", "@upstash/redis/*"],
  logLevel: "silent",
} satisfies BuildOptions;

const bundles = new Map<string, Script>();

/** The key of a set of patches (the unchanged library: ""). */
export const patchKey = (patches: readonly SourcePatch[]): string =>
  patches.length === 0 ? "" : JSON.stringify(patches);

const wrap = (code: string, key: string): Script =>
  new Script(`(function (module, exports, require) {\n${code}\n})`, {
    filename: key === "" ? "edgelock-sim-bundle.js" : "edgelock-sim-bundle-patched.js",
  });

/**
 * The bundle for `patches`: the unchanged library is built here on first use; a variant must
 * have been prepared by {@link prepareBundle}.
 *
 * @example
 * const factory = bundleFor([]).runInContext(context);
 */
export function bundleFor(patches: readonly SourcePatch[]): Script {
  const key = patchKey(patches);
  const known = bundles.get(key);
  if (known !== undefined) return known;
  if (key !== "") throw new Error("a patched bundle is used before prepareBundle() built it");
  const script = wrap(buildSync(OPTIONS).outputFiles?.[0]?.text ?? "", key);
  bundles.set(key, script);
  return script;
}

/**
 * Build the bundle with `patches` applied (once per process).
 *
 * @throws {Error} a patch names a file that is not in the bundle, or a passage not in its file
 * @example
 * await prepareBundle([{ file: "src/semaphore/rounds.ts", from: "a", to: "b" }]);
 */
export async function prepareBundle(patches: readonly SourcePatch[]): Promise<void> {
  const key = patchKey(patches);
  if (bundles.has(key)) return;
  const byFile = new Map<string, SourcePatch[]>();
  for (const patch of patches) {
    const path = `${ROOT}${patch.file}`;
    byFile.set(path, [...(byFile.get(path) ?? []), patch]);
  }
  const applied = new Set<SourcePatch>();
  const plugin: Plugin = {
    name: "sim-patches",
    setup(on) {
      on.onLoad({ filter: /\.ts$/ }, (args) => {
        const mine = byFile.get(args.path);
        if (mine === undefined) return undefined;
        let source = readFileSync(args.path, "utf8");
        for (const patch of mine) {
          if (!source.includes(patch.from)) {
            throw new Error(`patch of ${patch.file}: "${patch.from}" is no longer in the source`);
          }
          source = source.replace(patch.from, patch.to);
          applied.add(patch);
        }
        return { contents: source, loader: "ts" };
      });
    },
  };
  const result = await build({ ...OPTIONS, plugins: [plugin] });
  const missing = patches.filter((p) => !applied.has(p));
  if (missing.length > 0) {
    throw new Error(`patch of ${missing[0]?.file}: the file is not in the client's bundle`);
  }
  bundles.set(key, wrap(result.outputFiles?.[0]?.text ?? "", key));
}
