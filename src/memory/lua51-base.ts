/**
 * Functions of the base and string libraries whose 5.3 versions fengari has and Lua 5.1 (Redis's)
 * does not: `load` of a text, `string.rep` with a separator, `tonumber` with a base wrapping to
 * fengari's 32-bit integers. `lua-sandbox.ts` installs these in their place.
 *
 * @module
 */

import fengari from "fengari";
import { utf8Text } from "./lua-format";

const { lauxlib, lua, to_luastring } = fengari;
type State = ReturnType<typeof lauxlib.luaL_newstate>;

/**
 * `load(f [, name])` as 5.1 has it: `f` returns the chunk's pieces (never the chunk's text); the
 * 5.3 `load` at upvalue 1.
 *
 * @example
 * lua.lua_getglobal(L, to_luastring("load"));
 * lua.lua_pushcclosure(L, load, 1);
 */
export function load(L: State): number {
  if (lua.lua_type(L, 1) !== lua.LUA_TFUNCTION) {
    const got = lua.lua_type(L, 1) === lua.LUA_TNONE ? "no value" : typeName(L, 1);
    lauxlib.luaL_argerror(L, 1, to_luastring(`function expected, got ${got}`));
  }
  lua.lua_settop(L, 2);
  lua.lua_pushvalue(L, lua.lua_upvalueindex(1));
  lua.lua_insert(L, 1);
  lua.lua_call(L, 2, 2);
  return 2;
}

const typeName = (L: State, at: number): string =>
  fengari.to_jsstring(lua.lua_typename(L, lua.lua_type(L, at)));

/**
 * `string.rep(s, n)` as 5.1 has it: no separator (5.3 takes one as a third argument).
 *
 * @example
 * lua.lua_pushcfunction(L, rep); // string.rep("ab", 3, ",") is then "ababab"
 */
export function rep(L: State): number {
  const s = lauxlib.luaL_checklstring(L, 1);
  const n = Math.trunc(lauxlib.luaL_checknumber(L, 2));
  if (n <= 0 || s.length === 0) {
    lua.lua_pushstring(L, to_luastring(""));
    return 1;
  }
  if (s.length * n >= 2 ** 31) return lauxlib.luaL_error(L, to_luastring("not enough memory"));
  const out = new Uint8Array(s.length * n);
  for (let i = 0; i < n; i++) out.set(s, i * s.length);
  lua.lua_pushstring(L, out);
  return 1;
}

const ULONG_MAX = 2n ** 64n - 1n;

/**
 * `tonumber(s, base)` as 5.1 has it: C's `strtoul` (a 64-bit unsigned value, saturated past
 * 2^64 - 1, a minus sign wrapping it) where 5.3's wraps to fengari's 32-bit integers; without a
 * base (or base 10), the library's own, at upvalue 1.
 *
 * @example
 * lua.lua_getglobal(L, to_luastring("tonumber"));
 * lua.lua_pushcclosure(L, tonumber, 1); // tonumber("ffffffffffff", 16) is then 2.8147497671066e+14
 */
export function tonumber(L: State): number {
  const base = lua.lua_type(L, 2) <= 0 ? 10 : lauxlib.luaL_checkinteger(L, 2);
  if (base === 10) {
    if (lua.lua_gettop(L) > 1) lua.lua_settop(L, 1);
    lua.lua_pushvalue(L, lua.lua_upvalueindex(1));
    lua.lua_insert(L, 1);
    lua.lua_call(L, lua.lua_gettop(L) - 1, 1);
    return 1;
  }
  const text = utf8Text(lauxlib.luaL_checklstring(L, 1));
  lauxlib.luaL_argcheck(L, base >= 2 && base <= 36, 2, to_luastring("base out of range"));
  const [, sign = "", body = ""] = /^[ \t\n\v\f\r]*([+-]?)(.*)$/s.exec(text) ?? [];
  let i = base === 16 && /^0[xX][0-9a-fA-F]/.test(body) ? 2 : 0;
  const from = i;
  let value = 0n;
  for (; i < body.length; i++) {
    const d = /[0-9a-zA-Z]/.test(body[i] as string) ? Number.parseInt(body[i] as string, 36) : base;
    if (d >= base) break;
    value = value * BigInt(base) + BigInt(d);
  }
  if (i === from || !/^[ \t\n\v\f\r]*$/.test(body.slice(i))) return pushNil(L);
  if (value > ULONG_MAX) value = ULONG_MAX;
  else if (sign === "-") value = (2n ** 64n - value) % 2n ** 64n;
  return pushNumber(L, Number(value));
}

function pushNil(L: State): number {
  lua.lua_pushnil(L);
  return 1;
}

function pushNumber(L: State, n: number): number {
  lua.lua_pushnumber(L, n);
  return 1;
}
