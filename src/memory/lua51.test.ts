/**
 * Lua 5.1's numbers as text (pure logic, the expected texts read from redis-server 7.0's Lua), and
 * the patches to fengari acting only inside a memory node's script: another Lua state in the same
 * program keeps plain Lua 5.3.
 */
import fengari from "fengari";
import { describe, expect, it } from "vitest";
import { cFormat } from "./c-format";
import { formatNumber } from "./lua51";
import { SimNode } from "./sim-node";

const { lauxlib, lua, lualib, to_jsstring, to_luastring } = fengari;

describe("formatNumber: %.14g as glibc writes it", () => {
  it.each([
    [5, "5"],
    [-3, "-3"],
    [0.1, "0.1"],
    [1 / 3, "0.33333333333333"],
    [1e15, "1e+15"],
    [2 ** 53, "9.007199254741e+15"],
    [123456789012345, "1.2345678901234e+14"], // a tie, to even
    [99999999999999, "99999999999999"],
    [1e-5, "1e-05"],
    [0.0001, "0.0001"],
    [1_700_000_000_123, "1700000000123"],
    [Number.POSITIVE_INFINITY, "inf"],
    [Number.NEGATIVE_INFINITY, "-inf"],
    [Number.NaN, "-nan"],
  ])("%s → %s", (n, text) => {
    expect(formatNumber(n)).toBe(text);
  });

  it("printf's e, f and g with flags, width and precision", () => {
    expect(cFormat(2.5, "f", "", "", "0")).toBe("2");
    expect(cFormat(0.125, "f", "", "", "2")).toBe("0.12");
    expect(cFormat(1.5, "e", "", "", undefined)).toBe("1.500000e+00");
    expect(cFormat(-2.25, "E", "", "", "1")).toBe("-2.2E+00");
    expect(cFormat(3.5, "f", "+", "8", "2")).toBe("   +3.50");
    expect(cFormat(3.5, "f", "0", "8", "2")).toBe("00003.50");
    expect(cFormat(3.5, "g", "-", "6", undefined)).toBe("3.5   ");
    expect(cFormat(100000, "g", "#", "", undefined)).toBe("100000.");
  });
});

describe("the patches act only inside a memory node's script", () => {
  it("a plain fengari state, after a memory node ran a script, still writes 10/2 as 5.0", () => {
    const node = new SimNode({ now: () => 0, sha1: () => "0".repeat(40) });
    expect(node.eval("return tostring(10/2) .. (10/2)", [], [])).toEqual({ ok: true, value: "55" });
    const L = lauxlib.luaL_newstate();
    lualib.luaL_openlibs(L);
    lauxlib.luaL_loadstring(
      L,
      to_luastring("x = 1 return tostring(10/2) .. (10/2) .. math.type(1)"),
    );
    lua.lua_call(L, 0, 1);
    expect(to_jsstring(lua.lua_tostring(L, -1))).toBe("5.05.0integer");
  });
});
