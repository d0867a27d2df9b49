/**
 * The environment a memory node's scripts run in, built once per Lua state as Redis 7.0 builds its
 * own: the base, table, string, math and coroutine libraries in their Lua 5.1 shape (5.3's
 * additions removed, `unpack`, `loadstring`, `math.pow`, `table.getn` and the like put back),
 * `tostring`, `tonumber` with a base, `error`, `pcall`, `setmetatable`, `string.format`, `math.floor`/`ceil`/`random` as
 * 5.1 and Redis have them, the `redis` and `cjson` libraries, and the protection: reading an unset
 * global is an error, and every table reachable from the globals (and the string metatable) is
 * read-only. What Redis has and a memory node does not model is refused by name.
 *
 * @module
 */

import fengari from "fengari";
import { decode, encode, JSON_NULL } from "./lua-cjson";
import { format, tostring, utf8Text } from "./lua-format";
import { random, randomseed } from "./lua-random";
import * as redis from "./lua-redis";
import { isReadonly, READONLY, setReadonly } from "./lua51";
import { load, rep, tonumber } from "./lua51-base";

const { lauxlib, lua, lualib, to_luastring } = fengari;
type State = ReturnType<typeof lauxlib.luaL_newstate>;

const LIBRARIES = [
  ["_G", lualib.luaopen_base],
  ["table", lualib.luaopen_table],
  ["string", lualib.luaopen_string],
  ["math", lualib.luaopen_math],
  ["coroutine", lualib.luaopen_coroutine],
] as const;

/** Lua 5.3's additions removed and 5.1's names put back, as Redis's scripts have them. */
const PRELUDE = `
local G = _G
G.unpack, G.loadstring, G._VERSION = table.unpack, load, "Lua 5.1"
G.dofile, G.loadfile, G.print, G.rawlen, G.utf8 = nil, nil, nil, nil, nil
string.pack, string.packsize, string.unpack = nil, nil, nil
math.tointeger, math.type, math.ult, math.maxinteger, math.mininteger = nil, nil, nil, nil, nil
local exp, log, atan = math.exp, math.log, math.atan
math.pow = function(x, y) return x ^ y end
math.log = function(x) return log(x) end
math.log10 = function(x) return log(x, 10) end
math.atan = function(x) return atan(x) end
math.atan2 = function(y, x) return atan(y, x) end
math.ldexp = function(m, e) return m * 2 ^ e end
math.cosh = function(x) return (exp(x) + exp(-x)) / 2 end
math.sinh = function(x) return (exp(x) - exp(-x)) / 2 end
math.tanh = function(x) local a, b = exp(x), exp(-x) return (a - b) / (a + b) end
table.move, table.pack, table.unpack = nil, nil, nil
table.getn = function(t) return #t end
table.maxn = function(t)
  local n = 0
  for k in pairs(t) do if type(k) == "number" and k > n then n = k end end
  return n
end
coroutine.isyieldable = nil
`;

/** Globals of Redis 7.0 that memory nodes do not model (a script reading one is refused by name). */
const UNMODELLED_GLOBALS = new Set(["bit", "struct", "cmsgpack", "gcinfo"]);
/** Fields of `redis` and `cjson` in Redis 7.0 that memory nodes do not model. */
const UNMODELLED_FIELDS: Record<string, readonly string[]> = {
  redis: [
    "acl_check_cmd",
    "breakpoint",
    "debug",
    "replicate_commands",
    "set_repl",
    "REDIS_VERSION",
    "REDIS_VERSION_NUM",
    "REPL_ALL",
    "REPL_AOF",
    "REPL_NONE",
    "REPL_REPLICA",
    "REPL_SLAVE",
  ],
  cjson: [
    "new",
    "encode_keep_buffer",
    "encode_max_depth",
    "encode_number_precision",
    "decode_max_depth",
    "encode_invalid_numbers",
    "decode_invalid_numbers",
    "encode_sparse_array",
    "_NAME",
    "_VERSION",
  ],
};

/**
 * Open the libraries into `L` and protect them; `host` gives the node a script runs on. Call inside
 * `inLua51` (the prelude's numerals are 5.1 numbers). Returns the globals table (fengari's object).
 *
 * @example
 * const globals = openSandbox(L, () => currentHost);
 */
export function openSandbox(L: State, host: () => redis.Host): object {
  for (const [name, open] of LIBRARIES) {
    lauxlib.luaL_requiref(L, to_luastring(name), open, 1);
    lua.lua_settop(L, 0);
  }
  if (lauxlib.luaL_loadbuffer(L, to_luastring(PRELUDE), null, to_luastring("=prelude"))) {
    throw new Error(utf8Text(lua.lua_tostring(L, -1)));
  }
  lua.lua_call(L, 0, 0);
  setGlobal(L, "tostring", tostring);
  setGlobal(L, "error", redis.error);
  setGlobal(L, "pcall", redis.pcall);
  lua.lua_getglobal(L, to_luastring("load"));
  lua.lua_pushcclosure(L, load, 1);
  lua.lua_setglobal(L, to_luastring("load"));
  lua.lua_getglobal(L, to_luastring("tonumber"));
  lua.lua_pushcclosure(L, tonumber, 1);
  lua.lua_setglobal(L, to_luastring("tonumber"));
  lua.lua_getglobal(L, to_luastring("setmetatable"));
  lua.lua_pushcclosure(L, setmetatable, 1);
  lua.lua_setglobal(L, to_luastring("setmetatable"));
  lua.lua_getglobal(L, to_luastring("string"));
  lua.lua_getfield(L, -1, to_luastring("format"));
  lua.lua_pushcclosure(L, format, 1);
  lua.lua_setfield(L, -2, to_luastring("format"));
  setField(L, "rep", rep);
  lua.lua_settop(L, 0);
  lua.lua_getglobal(L, to_luastring("math"));
  setField(L, "floor", (S) => pushNumber(S, Math.floor(lauxlib.luaL_checknumber(S, 1))));
  setField(L, "ceil", (S) => pushNumber(S, Math.ceil(lauxlib.luaL_checknumber(S, 1))));
  setField(L, "random", (S) => random(S, host().random));
  setField(L, "randomseed", (S) => randomseed(S, host().random));
  lua.lua_settop(L, 0);
  openRedis(L, host);
  openCjson(L);
  protectGlobals(L);
  lua.lua_pushglobaltable(L);
  const globals = lua.lua_topointer(L, -1) as object;
  protect(L, -1, new Set());
  lua.lua_pushstring(L, to_luastring(""));
  lua.lua_getmetatable(L, -1);
  protect(L, -1, new Set());
  lua.lua_settop(L, 0);
  return globals;
}

function openRedis(L: State, host: () => redis.Host): void {
  lua.lua_createtable(L, 0, 12);
  setField(L, "call", (S) => redis.call(S, host(), true));
  setField(L, "pcall", (S) => redis.call(S, host(), false));
  setField(L, "error_reply", (S) => redis.reply(S, "err"));
  setField(L, "status_reply", (S) => redis.reply(S, "ok"));
  setField(L, "sha1hex", (S) => redis.sha1hex(S, host()));
  setField(L, "log", redis.log);
  setField(L, "setresp", redis.setresp);
  ["LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"].forEach((name, level) => {
    lua.lua_pushnumber(L, level);
    lua.lua_setfield(L, -2, to_luastring(name));
  });
  refuseFields(L, "redis");
  lua.lua_setglobal(L, to_luastring("redis"));
}

function openCjson(L: State): void {
  lua.lua_createtable(L, 0, 3);
  setField(L, "encode", encode);
  setField(L, "decode", decode);
  lua.lua_pushlightuserdata(L, JSON_NULL);
  lua.lua_setfield(L, -2, to_luastring("null"));
  refuseFields(L, "cjson");
  lua.lua_setglobal(L, to_luastring("cjson"));
}

/** `setmetatable`, refusing a read-only table as Redis 7 does. */
function setmetatable(L: State): number {
  if (lua.lua_type(L, 1) === lua.LUA_TTABLE && isReadonly(lua.lua_topointer(L, 1))) {
    lua.lua_pushstring(L, to_luastring(READONLY));
    return lua.lua_error(L);
  }
  lua.lua_pushvalue(L, lua.lua_upvalueindex(1));
  lua.lua_insert(L, 1);
  lua.lua_call(L, lua.lua_gettop(L) - 1, 1);
  return 1;
}

function pushNumber(L: State, n: number): number {
  lua.lua_pushnumber(L, n);
  return 1;
}

function setField(L: State, name: string, fn: (L: State) => number): void {
  lua.lua_pushcfunction(L, fn);
  lua.lua_setfield(L, -2, to_luastring(name));
}

function setGlobal(L: State, name: string, fn: (L: State) => number): void {
  lua.lua_pushcfunction(L, fn);
  lua.lua_setglobal(L, to_luastring(name));
}

/** A metatable on the table at the top whose `__index` refuses, by name, a field not modelled. */
function refuseFields(L: State, library: string): void {
  const names = new Set(UNMODELLED_FIELDS[library]);
  lua.lua_createtable(L, 0, 1);
  setField(L, "__index", (S) => {
    const key = lua.lua_type(S, 2) === lua.LUA_TSTRING ? utf8Text(lua.lua_tostring(S, 2)) : "";
    if (names.has(key)) {
      redis.raise(S, redis.notModelled(`${library}.${key}`, "not in a memory node's Lua"));
    }
    return 0;
  });
  lua.lua_setmetatable(L, -2);
}

/** The globals' metatable: reading an unset global is an error, as in Redis 7. */
function protectGlobals(L: State): void {
  lua.lua_pushglobaltable(L);
  lua.lua_createtable(L, 0, 1);
  setField(L, "__index", (S) => {
    const name = utf8Text(lauxlib.luaL_tolstring(S, 2));
    if (UNMODELLED_GLOBALS.has(name)) {
      redis.raise(S, redis.notModelled(name, "not in a memory node's Lua"));
    }
    lauxlib.luaL_where(S, 1);
    lua.lua_pushstring(
      S,
      to_luastring(`Script attempted to access nonexistent global variable '${name}'`),
    );
    lua.lua_concat(S, 2);
    return lua.lua_error(S);
  });
  lua.lua_setmetatable(L, -2);
  lua.lua_settop(L, -2);
}

/** Make the table at `at`, its metatable and every table reachable from it read-only. */
function protect(L: State, at: number, seen: Set<object>): void {
  const index = at < 0 ? lua.lua_gettop(L) + at + 1 : at;
  const table = lua.lua_topointer(L, index) as object;
  if (seen.has(table)) return;
  seen.add(table);
  if (lua.lua_getmetatable(L, index)) protect(L, -1, seen);
  lua.lua_settop(L, index);
  lua.lua_pushnil(L);
  while (lua.lua_next(L, index) !== 0) {
    if (lua.lua_type(L, -1) === lua.LUA_TTABLE) protect(L, -1, seen);
    lua.lua_settop(L, -2);
  }
  setReadonly(table, true);
}
