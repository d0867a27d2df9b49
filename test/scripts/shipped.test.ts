/**
 * The Lua edgelock ships (`src/scripts/shipped.ts`) is its commented source (`src/scripts/lua.ts`)
 * minus comments and whitespace, with its locals renamed short: the same Lua tokens, script by
 * script, up to a one-to-one renaming of local variables; the committed file is what
 * `scripts/ship-lua.ts` generates from the current source; the scripts the library runs (and sends
 * with EVAL on NOSCRIPT) are the shipped texts.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  KEYWORDS,
  type LuaToken,
  localNames,
  REDIS_GLOBALS,
  renderSemaphoreShipped,
  renderShipped,
  SEMAPHORE_NAMES,
  SEMAPHORE_SHIPPED_PATH,
  SEMAPHORE_SOURCES,
  SHIPPED_NAMES,
  SHIPPED_PATH,
  SOURCES,
  sha1,
  shipLua,
  tokenize,
  variables,
} from "../../scripts/ship-lua";
import { SCRIPTS } from "../../src/scripts";
import { SEMAPHORE_SCRIPTS } from "../../src/scripts/semaphore";
import * as semaphoreShipped from "../../src/scripts/semaphore-shipped";
import * as lockShipped from "../../src/scripts/shipped";

/** Both shipped modules: the lock's scripts and the semaphore's (names are distinct). */
const shipped: Readonly<Record<string, string>> = { ...lockShipped, ...semaphoreShipped };
const ALL_SOURCES: Readonly<Record<string, string>> = { ...SOURCES, ...SEMAPHORE_SOURCES };

const texts = (lua: string): string[] => tokenize(lua).map((t) => t.text);

/**
 * The lock scripts' SHA-1s as shipped, pinned before the semaphore's scripts existed (main at
 * 53ef635) and pinned again at the late-pass fix (EXTEND raises the holder's look, PASS keeps a
 * token with no record: docs/SAFETY.md §2 P4; their new locals moved the shared renaming, so every
 * text changed). The simulation's seeds, the mutants and campaigns in progress depend on these
 * exact texts: the semaphore's scripts are shipped with their own renaming (`SEMAPHORE_NAMES`) so
 * that adding them changes no lock script.
 */
const LOCK_SHA1S: Readonly<Record<string, string>> = {
  ACQUIRE: "2dd2d10ce28d3432c39beb131dbbc407f0668e6a",
  COMPLETE: "574c6b1ade95dc6a026514df771cec7b4f4d35ee",
  DISCARD: "231017c9d7b38a546b0d86fafee964423e247aff",
  EXTEND: "9c1ea2b2a028cfc64a41bb9123bea3402255c527",
  FENCE_RAISE: "5c9fef1049fc8a3277ab6b31755b26a212586e77",
  FORCE_RELEASE: "8272afae4909e8ebf6b61e6f5d811f0c37470b3c",
  HANDOVER: "d9232505618a075f4eff67567037d51b38dfd3f1",
  INSPECT: "2975d1570fa7b70602c3c7a5baf2ab6c918e4e94",
  LEAVE: "53abb1b971ed1594cd7b4fcec517517cda41fcb8",
  PASS: "37a0d848f20d991d4e5772761668eaf2a6511217",
  RECORD: "2c4d045aa1217069396c306e2debb1cc0ddc5cc8",
  RELEASE: "25098e0b1981583a79db62bfe5dad1fb99a61b27",
  RESUME: "97350a6443af56aa0324a82bab8e98afcf40d852",
};

/**
 * Checks that `after` is `before` with its variables renamed one to one, and returns the renaming
 * (names that changed). Token by token: the same text, except where both are a variable (a name
 * Lua resolves to a local or global, not a field or table key), where the source's name always
 * maps to the same new name, and no two names to one. Lua resolves a variable by its name alone
 * (the innermost local of that name in scope, else a global), so a one-to-one renaming of every
 * variable occurrence keeps what each refers to; no global of Redis's Lua is renamed or produced,
 * so every global read stays the same global.
 */
function sameUpToRenaming(before: LuaToken[], after: LuaToken[]): Map<string, string> {
  expect(after.length).toBe(before.length);
  const isVariable = variables(before);
  expect(variables(after)).toEqual(isVariable);
  const map = new Map<string, string>();
  before.forEach(({ text }, i) => {
    const now = after[i]?.text;
    if (!isVariable[i]) {
      expect(now, `token ${i}`).toBe(text);
      return;
    }
    expect(now, `variable ${text} at token ${i}`).toBe(map.get(text) ?? now);
    map.set(text, now as string);
  });
  expect(new Set(map.values()).size, "two names renamed to one").toBe(map.size);
  const renamed = new Map([...map].filter(([from, to]) => from !== to));
  for (const [from, to] of renamed) {
    expect(REDIS_GLOBALS.has(from), from).toBe(false);
    expect(REDIS_GLOBALS.has(to) || KEYWORDS.has(to), to).toBe(false);
  }
  return renamed;
}

describe("the shipped Lua", () => {
  it("src/scripts/shipped.ts is exactly what scripts/ship-lua.ts generates from lua.ts", async () => {
    expect(readFileSync(SHIPPED_PATH, "utf8")).toBe(await renderShipped());
  });

  it("src/scripts/semaphore-shipped.ts is exactly what it generates from semaphore-lua.ts", async () => {
    expect(readFileSync(SEMAPHORE_SHIPPED_PATH, "utf8")).toBe(await renderSemaphoreShipped());
    expect(Object.keys(SEMAPHORE_SOURCES).length).toBe(SEMAPHORE_SCRIPTS.length);
    for (const name of Object.keys(SEMAPHORE_SOURCES)) expect(SOURCES[name], name).toBeUndefined();
  });

  it.each(Object.keys(ALL_SOURCES))(
    "%s: the same Lua tokens as its commented source up to a renaming of locals, no comment",
    (name) => {
      const source = ALL_SOURCES[name] as string;
      const lua = shipped[name] as string;
      const renaming = sameUpToRenaming(tokenize(source), tokenize(lua));
      // Locals were renamed (the point of it), and only locals: every renamed name is declared
      // `local` in the source (or a parameter, or a loop variable).
      expect(renaming.size).toBeGreaterThan(0);
      for (const from of renaming.keys()) {
        expect(source, from).toMatch(new RegExp(`(local|function|for|,|\\()\\s*${from}\\b`));
      }
      expect(source).toMatch(/^-- edgelock /);
      // Nothing but tokens and single separators is left: no comment, no indentation.
      expect(lua).not.toMatch(/^\s|\s$|\s\s|\n /);
      expect(lua.length).toBeLessThan(source.length * 0.8);
    },
  );

  it("the lock scripts ship byte-identical: every SHA-1 is still its pinned value", async () => {
    const now = Object.fromEntries(
      Object.entries(lockShipped)
        .filter(([name]) => name.endsWith("_SHA1"))
        .map(([name, sha]) => [name.slice(0, -"_SHA1".length), sha]),
    );
    expect(now).toEqual(LOCK_SHA1S);
    for (const [stem, sha] of Object.entries(LOCK_SHA1S)) {
      const lua = shipped[`${stem}_LUA`] as string;
      expect(await sha1(lua), stem).toBe(sha);
    }
  });

  it("the scripts the library runs are the shipped texts, under their SHA-1s", async () => {
    const byText = new Map(Object.entries(shipped).map(([name, value]) => [value, name]));
    for (const script of [...SCRIPTS, ...SEMAPHORE_SCRIPTS]) {
      expect(await sha1(script.lua), script.name).toBe(script.sha1);
      const name = byText.get(script.lua) ?? "";
      expect(name, script.name).toMatch(/_LUA$/);
      expect(shipped[name.replace(/_LUA$/, "_SHA1")]).toBe(script.sha1);
    }
  });

  it("one renaming for every script: a helper has the same short name in each", () => {
    const lockKey = SHIPPED_NAMES.get("lockKey") as string;
    expect(lockKey.length).toBe(1);
    // The semaphore's renaming extends the lock scripts': theirs unchanged, new names distinct.
    for (const [from, to] of SHIPPED_NAMES) expect(SEMAPHORE_NAMES.get(from), from).toBe(to);
    expect(new Set(SEMAPHORE_NAMES.values()).size).toBe(SEMAPHORE_NAMES.size);
    for (const name of ["ACQUIRE_LUA", "RELEASE_LUA", "EXTEND_LUA", "SEM_ACQUIRE_LUA"]) {
      const lua = shipped[name] as string;
      expect(lua).toContain(`local function ${lockKey}(`);
    }
  });

  it("the renaming leaves fields, table keys and globals alone and refuses what it cannot tell", () => {
    const lua =
      "local ok = redis.call('TYPE', KEYS[1]).ok local t = { ok = ok, [ok] = 1 } return t.ok";
    const out = shipLua(lua);
    expect(out).toBe("local a=redis.call('TYPE',KEYS[1]).ok local b={ok=a,[a]=1}return b.ok");
    expect(sameUpToRenaming(tokenize(lua), tokenize(out))).toEqual(
      new Map([
        ["ok", "a"],
        ["t", "b"],
      ]),
    );
    // Kept names and globals are never a new name; a local shadowing a global keeps its name.
    expect(shipLua("local tonumber = 1 local n = a return n + tonumber")).toBe(
      "local tonumber=1 local b=a return b+tonumber",
    );
    expect(
      localNames([tokenize("for i, v in pairs(x) do local function f(p, q) end end")]),
    ).toEqual(
      new Map([
        ["i", "a"],
        ["v", "b"],
        ["f", "c"],
        ["p", "d"],
        ["q", "e"],
      ]),
    );
    // Extending a base renaming: its names stay, the others skip its short names.
    expect(
      localNames([tokenize("local x, y, z = 1 return x + y + z + y")], new Map([["x", "b"]])),
    ).toEqual(
      new Map([
        ["x", "b"],
        ["y", "a"],
        ["z", "c"],
      ]),
    );
    expect(() => shipLua("local t = { f = function() end }")).toThrow(/table constructor/);
    // A renaming made for other chunks must cover the chunk it ships.
    expect(() => shipLua("local zz = 1", new Map())).toThrow(/zz not renamed/);
    expect(() => shipLua("local x = 1 return a", new Map([["x", "a"]]))).toThrow(/both kept/);
  });

  it("the lexer keeps strings whole: a -- inside quotes or long brackets is no comment", () => {
    const lua = [
      "-- a comment",
      "local a = \"x -- y\" .. '--' .. [[ -- ]] .. [==[ ]] -- ]==] --[[ a long",
      "comment ]] local b = 1 .. 2",
      "local c = a - -b --[=[ another ]=]",
      'return "q\\"--" , 0x1F, 3e2, .5',
    ].join("\n");
    expect(texts(lua)).toEqual([
      "local",
      "a",
      "=",
      '"x -- y"',
      "..",
      "'--'",
      "..",
      "[[ -- ]]",
      "..",
      "[==[ ]] -- ]==]",
      "local",
      "b",
      "=",
      "1",
      "..",
      "2",
      "local",
      "c",
      "=",
      "a",
      "-",
      "-",
      "b",
      "return",
      '"q\\"--"',
      ",",
      "0x1F",
      ",",
      "3e2",
      ",",
      ".5",
    ]);
    const out = shipLua(
      lua,
      new Map([
        ["a", "a"],
        ["b", "b"],
        ["c", "c"],
      ]),
    );
    expect(texts(out)).toEqual(texts(lua));
    // Separators stay where two tokens would read as one: `1 ..`, `- -`.
    expect(out).toContain("1 ..2");
    expect(out).toContain("a- -b");
    expect(shipLua("local x = 1 -- one\nreturn x\n")).toBe("local a=1\nreturn a");
  });
});
