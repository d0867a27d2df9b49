/**
 * The Lua edgelock ships (`src/scripts/shipped.ts`) is its commented source (`src/scripts/lua.ts`)
 * minus comments and whitespace: the same Lua tokens, script by script; the committed file is what
 * `scripts/ship-lua.ts` generates from the current source; the scripts the library runs (and sends
 * with EVAL on NOSCRIPT) are the shipped texts.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderShipped, SHIPPED_PATH, SOURCES, shipLua, tokenize } from "../../scripts/ship-lua";
import { SCRIPTS } from "../../src/scripts";
import * as shipped from "../../src/scripts/shipped";

const texts = (lua: string): string[] => tokenize(lua).map((t) => t.text);

describe("the shipped Lua", () => {
  it("src/scripts/shipped.ts is exactly what scripts/ship-lua.ts generates from lua.ts", async () => {
    expect(readFileSync(SHIPPED_PATH, "utf8")).toBe(await renderShipped());
  });

  it.each(Object.keys(SOURCES))(
    "%s: the same Lua tokens as its commented source, no comment",
    (name) => {
      const source = SOURCES[name] as string;
      const lua = (shipped as Record<string, string>)[name] as string;
      expect(texts(lua)).toEqual(texts(source));
      expect(source).toMatch(/^-- edgelock /);
      // Nothing but tokens and single separators is left: no comment, no indentation.
      expect(lua).not.toMatch(/^\s|\s$|\s\s|\n /);
      expect(lua.length).toBeLessThan(source.length * 0.8);
    },
  );

  it("the scripts the library runs are the shipped texts, under their SHA-1s", () => {
    const byText = new Map(Object.entries(shipped).map(([name, value]) => [value, name]));
    for (const script of SCRIPTS) {
      const name = byText.get(script.lua) ?? "";
      expect(name, script.name).toMatch(/_LUA$/);
      expect((shipped as Record<string, string>)[name.replace(/_LUA$/, "_SHA1")]).toBe(script.sha1);
    }
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
    const out = shipLua(lua);
    expect(texts(out)).toEqual(texts(lua));
    // Separators stay where two tokens would read as one: `1 ..`, `- -`.
    expect(out).toContain("1 ..2");
    expect(out).toContain("a- -b");
    expect(shipLua("local x = 1 -- one\nreturn x\n")).toBe("local x=1\nreturn x");
  });
});
