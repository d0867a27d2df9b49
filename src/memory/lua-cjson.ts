/**
 * `cjson.encode` and `cjson.decode` as Redis ships them (lua-cjson 2.1): numbers as `%.14g`, `/` escaped as `\/`, a table with only positive integer keys as an
 * array (holes as `null`, "excessively sparse" past twice its items and index 10), any other as an
 * object, the empty table as `{}`, `cjson.null` for JSON's null, and cjson's error texts for what
 * cannot be encoded; decoding in `cjson-decode.ts`. What differs: an object's keys come out in the
 * order they were set (Redis's in its hash order, which JSON does not give meaning to).
 *
 * @module
 */

import fengari from "fengari";
import { type Decoded, decodeJson, JSON_NULL, JsonDecodeError } from "./cjson-decode";
import { formatNumber } from "./lua51";

const { lauxlib, lua, to_luastring } = fengari;
type State = ReturnType<typeof lauxlib.luaL_newstate>;

export { JSON_NULL };

const MAX_DEPTH = 1000;
const ESCAPES: Record<number, string> = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r" };

function quote(bytes: Uint8Array): string {
  let out = '"';
  for (const b of bytes) {
    if (b === 0x22) out += '\\"';
    else if (b === 0x5c) out += "\\\\";
    else if (b === 0x2f) out += "\\/";
    else if (ESCAPES[b] !== undefined) out += ESCAPES[b];
    else if (b < 0x20 || b === 0x7f) out += `\\u${b.toString(16).padStart(4, "0")}`;
    else out += String.fromCharCode(b);
  }
  return `${out}"`;
}

function fail(L: State, type: string, reason: string): never {
  return lauxlib.luaL_error(L, to_luastring(`Cannot serialise ${type}: ${reason}`));
}

/** The array length of the table at `index`, or -1 when it is to be an object. */
function arrayLength(L: State, index: number): number {
  let max = 0;
  let items = 0;
  lua.lua_pushnil(L);
  while (lua.lua_next(L, index) !== 0) {
    lua.lua_settop(L, -2);
    const k = lua.lua_type(L, -1) === lua.LUA_TNUMBER ? lua.lua_tonumber(L, -1) : Number.NaN;
    if (!(Number.isInteger(k) && k >= 1)) {
      lua.lua_settop(L, -2);
      return -1;
    }
    max = Math.max(max, k);
    items++;
  }
  if (max > items * 2 && max > 10) fail(L, "table", "excessively sparse array");
  return max;
}

function encodeAt(L: State, at: number, depth: number): string {
  const index = at < 0 ? lua.lua_gettop(L) + at + 1 : at;
  const type = lua.lua_type(L, index);
  if (type === lua.LUA_TSTRING) return quote(lua.lua_tolstring(L, index));
  if (type === lua.LUA_TNUMBER) {
    const n = lua.lua_tonumber(L, index);
    if (!Number.isFinite(n)) fail(L, "number", "must not be NaN or Inf");
    return formatNumber(n);
  }
  if (type === lua.LUA_TBOOLEAN) return lua.lua_toboolean(L, index) ? "true" : "false";
  if (type === lua.LUA_TNIL) return "null";
  if (type === lua.LUA_TLIGHTUSERDATA && lua.lua_touserdata(L, index) === JSON_NULL) return "null";
  if (type !== lua.LUA_TTABLE) {
    return fail(L, fengari.to_jsstring(lua.lua_typename(L, type)), "type not supported");
  }
  // As cjson: too deep, or no room left on the Lua stack (a table holding itself).
  if (depth > MAX_DEPTH || !lua.lua_checkstack(L, 3)) {
    return lauxlib.luaL_error(L, to_luastring(`Cannot serialise, excessive nesting (${depth})`));
  }
  const length = arrayLength(L, index);
  if (length > 0) {
    const items: string[] = [];
    for (let i = 1; i <= length; i++) {
      lua.lua_rawgeti(L, index, i);
      items.push(encodeAt(L, -1, depth + 1));
      lua.lua_settop(L, -2);
    }
    return `[${items.join(",")}]`;
  }
  const members: string[] = [];
  lua.lua_pushnil(L);
  while (lua.lua_next(L, index) !== 0) {
    const keyType = lua.lua_type(L, -2);
    let key: string;
    if (keyType === lua.LUA_TSTRING) key = quote(lua.lua_tolstring(L, -2));
    else if (keyType === lua.LUA_TNUMBER) key = `"${formatNumber(lua.lua_tonumber(L, -2))}"`;
    else return fail(L, "table", "table key must be a number or string");
    members.push(`${key}:${encodeAt(L, -1, depth + 1)}`);
    lua.lua_settop(L, -2);
  }
  return `{${members.join(",")}}`;
}

/** `cjson.encode(value)`. */
export function encode(L: State): number {
  lauxlib.luaL_argcheck(L, lua.lua_gettop(L) === 1, 1, to_luastring("expected 1 argument"));
  const json = encodeAt(L, 1, 1);
  // The text is bytes: each char code below 256 (strings were escaped byte by byte).
  lua.lua_pushstring(
    L,
    Uint8Array.from(json, (c) => c.charCodeAt(0)),
  );
  return 1;
}

function push(L: State, value: Decoded): void {
  if (value instanceof Uint8Array) lua.lua_pushstring(L, value);
  else if (typeof value === "number") lua.lua_pushnumber(L, value);
  else if (typeof value === "boolean") lua.lua_pushboolean(L, value);
  else if (value === JSON_NULL) lua.lua_pushlightuserdata(L, JSON_NULL);
  else if (Array.isArray(value)) {
    lua.lua_createtable(L, value.length, 0);
    value.forEach((item, i) => {
      push(L, item);
      lua.lua_rawseti(L, -2, i + 1);
    });
  } else if (value instanceof Map) {
    lua.lua_createtable(L, 0, value.size);
    for (const [k, v] of value as Map<Uint8Array, Decoded>) {
      lua.lua_pushstring(L, k);
      push(L, v);
      lua.lua_rawset(L, -3);
    }
  }
}

/** `cjson.decode(text)`. */
export function decode(L: State): number {
  lauxlib.luaL_argcheck(L, lua.lua_gettop(L) === 1, 1, to_luastring("expected 1 argument"));
  const text = lauxlib.luaL_checklstring(L, 1);
  let value: Decoded;
  try {
    value = decodeJson(text);
  } catch (error) {
    if (!(error instanceof JsonDecodeError)) throw error;
    return lauxlib.luaL_error(L, to_luastring(error.message));
  }
  push(L, value);
  return 1;
}
