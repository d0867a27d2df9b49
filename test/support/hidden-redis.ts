/**
 * A `PATH` on which `redis-server` cannot be found, for the tests of the embedded default (a
 * newcomer's machine without Redis): a temporary folder of symlinks to every executable of the
 * current `PATH` except `redis-server`, first one of each name winning as on the real `PATH`, so
 * node, npm, npx and sh stay reachable.
 *
 * @example
 * ```ts
 * const hidden = pathWithoutRedis();
 * spawn("npm", ["start"], { env: { ...process.env, PATH: hidden.path } });
 * hidden.remove();
 * ```
 *
 * @module
 */

import { mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** The folder to use as `PATH`, and its removal. */
export interface HiddenRedisPath {
  readonly path: string;
  remove(): void;
}

/** Executables hidden from the returned `PATH`. */
const HIDDEN = new Set(["redis-server"]);

/** Builds the folder; `remove()` it after the test. */
export function pathWithoutRedis(): HiddenRedisPath {
  const dir = mkdtempSync(join(tmpdir(), "edgelock-no-redis-"));
  const linked = new Set<string>(HIDDEN);
  for (const folder of (process.env.PATH ?? "").split(delimiter)) {
    if (folder === "") continue;
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      continue; // a PATH entry that does not exist
    }
    for (const name of names) {
      if (linked.has(name)) continue;
      linked.add(name);
      symlinkSync(join(folder, name), join(dir, name));
    }
  }
  return { path: dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
