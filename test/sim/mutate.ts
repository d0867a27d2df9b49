/**
 * A script's mutant: its commented source (`src/scripts/lua.ts`, or `semaphore-lua.ts` for the
 * semaphore's) with a quoted passage replaced, shipped as the library ships it, for the simulated
 * nodes to run under the real script's SHA-1 (`mutants.ts`, `semaphore-mutants.ts`).
 *
 * @module
 */

import {
  SEMAPHORE_NAMES,
  SEMAPHORE_SOURCES,
  SHIPPED_NAMES,
  SOURCES,
  shipLua,
} from "../../scripts/ship-lua";
import type { Script } from "../../src/scripts";

/** Lua sources to run instead of the real ones, by the SHA-1 the client sends. */
export type ScriptOverrides = ReadonlyMap<string, string>;

/**
 * The script with `from` replaced by `to` (every occurrence with `every`) in its commented source
 * (whose lines the patterns quote), shipped as the library ships it (`shipLua`): the nodes run it
 * in place of the shipped script, under the same SHA-1.
 *
 * @throws {Error} no source ships as the script, the passage is not in it, or it changes nothing
 * @example
 * new Map([mutate(EXTEND, "if left >= 0 and left < tonumber(ttl) then", "if true then")]);
 */
export function mutate(
  script: Script<unknown>,
  from: string,
  to: string,
  every = false,
): [string, string] {
  const found = [
    ...Object.values(SOURCES).map((lua) => [lua, SHIPPED_NAMES] as const),
    ...Object.values(SEMAPHORE_SOURCES).map((lua) => [lua, SEMAPHORE_NAMES] as const),
  ].find(([lua, names]) => shipLua(lua, names) === script.lua);
  if (found === undefined) throw new Error(`mutant of ${script.name}: no source ships as it`);
  const [source, names] = found;
  if (!source.includes(from)) {
    throw new Error(`mutant of ${script.name}: "${from}" is no longer in the source`);
  }
  const mutated = shipLua(every ? source.split(from).join(to) : source.replace(from, to), names);
  if (mutated === script.lua) throw new Error(`mutant of ${script.name}: changes nothing`);
  return [script.sha1, mutated];
}
