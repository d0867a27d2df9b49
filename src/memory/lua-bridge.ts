/**
 * Runs scripts in fengari (Lua 5.3 in JS) as Redis 7.0 runs them in its Lua 5.1: `KEYS` and `ARGV`
 * as globals, the libraries Redis gives (base, table, string, math, coroutine, `redis`, `cjson`) in
 * their 5.1 shape (`math.random` is Redis's generator, one per node: `lua-random.ts`), numbers as
 * 5.1 has them (`lua51.ts`: all doubles, written with `%.14g`; `tostring` and `string.format` in
 * `lua-format.ts`), Redis 7's protected globals (every table a script can
 * reach between calls is read-only: creating a global is "Attempt to modify a readonly table",
 * reading an unset one is "Script attempted to access nonexistent global variable"), errors in
 * Redis 7's form (`… script: <sha>, on @user_script:<line>.`), and the script's result converted
 * as Redis converts it for the client (numbers truncated to integers, tables to arrays up to the
 * first nil, `true` to 1, `false`/nil to nil).
 *
 * One Lua state serves every node. Nothing a script leaves behind survives its call (the tables it
 * could write to between calls are read-only, and `KEYS`/`ARGV` are set per call), so no node's
 * script sees another's: the same as a state per node, with each script compiled once instead of
 * per node.
 *
 * @module
 */

import fengari from "fengari";
import type { Reply } from "./keyspace";
import { decode, encode, JSON_NULL } from "./lua-cjson";
import { format, tostring } from "./lua-format";
import { Rand48, random, randomseed } from "./lua-random";
import * as redis from "./lua-redis";
import { inLua51, isReadonly, patchFengari, READONLY, setReadonly } from "./lua51";

const { lauxlib, lua, lualib, to_jsstring, to_luastring } = fengari;
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

/** A script's result for the client, or the error Redis would reply. */
export type ScriptResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string };

/** What a script run reaches: the node's commands and, if it has one, a synchronous SHA-1. */
export type ScriptHost = redis.Host;

const OK = to_luastring("ok");
const ERR = to_luastring("err");

/**
 * @example
 * const bridge = new LuaBridge();
 * const host = { command: (argv) => keyspace.command(now, argv), random: new Rand48(), sha1: undefined };
 * bridge.run(source, ["k"], ["token"], host, sha);
 */
export class LuaBridge {
  readonly #L: State;
  #globals: object = {};
  readonly #compiled = new Map<string, number>();
  #host: redis.Host = { command: () => null, random: new Rand48(), sha1: undefined };

  constructor() {
    patchFengari();
    const L = lauxlib.luaL_newstate();
    this.#L = L;
    inLua51(() => {
      for (const [name, open] of LIBRARIES) {
        lauxlib.luaL_requiref(L, to_luastring(name), open, 1);
        lua.lua_settop(L, 0);
      }
      if (lauxlib.luaL_loadbuffer(L, to_luastring(PRELUDE), null, to_luastring("=prelude"))) {
        throw new Error(to_jsstring(lua.lua_tostring(L, -1)));
      }
      lua.lua_call(L, 0, 0);
      setGlobal(L, "tostring", tostring);
      setGlobal(L, "error", redis.error);
      setGlobal(L, "pcall", redis.pcall);
      lua.lua_getglobal(L, to_luastring("setmetatable"));
      lua.lua_pushcclosure(L, setmetatable, 1);
      lua.lua_setglobal(L, to_luastring("setmetatable"));
      lua.lua_getglobal(L, to_luastring("string"));
      lua.lua_getfield(L, -1, to_luastring("format"));
      lua.lua_pushcclosure(L, format, 1);
      lua.lua_setfield(L, -2, to_luastring("format"));
      lua.lua_settop(L, 0);
      lua.lua_getglobal(L, to_luastring("math"));
      setField(L, "floor", (S) => pushNumber(S, Math.floor(lauxlib.luaL_checknumber(S, 1))));
      setField(L, "ceil", (S) => pushNumber(S, Math.ceil(lauxlib.luaL_checknumber(S, 1))));
      setField(L, "random", (S) => random(S, this.#host.random));
      setField(L, "randomseed", (S) => randomseed(S, this.#host.random));
      lua.lua_settop(L, 0);
      this.#openRedis();
      this.#openCjson();
      protectGlobals(L);
      lua.lua_pushglobaltable(L);
      this.#globals = lua.lua_topointer(L, -1) as object;
      protect(L, -1, new Set());
      lua.lua_pushstring(L, to_luastring(""));
      lua.lua_getmetatable(L, -1);
      protect(L, -1, new Set());
      lua.lua_settop(L, 0);
    });
  }

  #openRedis(): void {
    const L = this.#L;
    lua.lua_createtable(L, 0, 12);
    setField(L, "call", (S) => redis.call(S, this.#host, true));
    setField(L, "pcall", (S) => redis.call(S, this.#host, false));
    setField(L, "error_reply", (S) => redis.reply(S, "err"));
    setField(L, "status_reply", (S) => redis.reply(S, "ok"));
    setField(L, "sha1hex", (S) => redis.sha1hex(S, this.#host));
    setField(L, "log", redis.log);
    setField(L, "setresp", redis.setresp);
    ["LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"].forEach((name, level) => {
      lua.lua_pushnumber(L, level);
      lua.lua_setfield(L, -2, to_luastring(name));
    });
    refuseFields(L, "redis");
    lua.lua_setglobal(L, to_luastring("redis"));
  }

  #openCjson(): void {
    const L = this.#L;
    lua.lua_createtable(L, 0, 3);
    setField(L, "encode", encode);
    setField(L, "decode", decode);
    lua.lua_pushlightuserdata(L, JSON_NULL);
    lua.lua_setfield(L, -2, to_luastring("null"));
    refuseFields(L, "cjson");
    lua.lua_setglobal(L, to_luastring("cjson"));
  }

  /**
   * Run `source` (whose SHA-1 is `sha`, for error replies) with `keys` and `args`; `host` executes
   * each `redis.call`.
   */
  run(
    source: string,
    keys: readonly string[],
    args: readonly string[],
    host: ScriptHost,
    sha: string,
  ): ScriptResult {
    return inLua51(() => {
      const L = this.#L;
      const ref = this.#compile(source);
      if (typeof ref === "string") return { ok: false, error: ref };
      this.#host = host;
      setReadonly(this.#globals, false);
      setArray(L, "KEYS", keys);
      setArray(L, "ARGV", args);
      setReadonly(this.#globals, true);
      lua.lua_pushcfunction(L, redis.messageHandler);
      lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
      const status = lua.lua_pcall(L, 0, 1, 1);
      try {
        if (status !== lua.LUA_OK) return { ok: false, error: failure(L, sha) };
        return toClient(L, -1);
      } finally {
        lua.lua_settop(L, 0);
      }
    });
  }

  #compile(source: string): number | string {
    const known = this.#compiled.get(source);
    if (known !== undefined) return known;
    const L = this.#L;
    const name = to_luastring("@user_script");
    if (lauxlib.luaL_loadbuffer(L, to_luastring(source), null, name) !== lua.LUA_OK) {
      // Lua 5.1 quotes the end of the source as a token; 5.3 does not.
      const message = to_jsstring(lua.lua_tostring(L, -1)).replace(/ <eof>/g, " '<eof>'");
      lua.lua_settop(L, 0);
      return `ERR Error compiling script (new function): ${message}`;
    }
    const ref = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    this.#compiled.set(source, ref);
    return ref;
  }
}

/** The error reply of a failed script: the handler's `[text, where]`, with the script's SHA-1. */
function failure(L: State, sha: string): string {
  const raw = to_jsstring(lua.lua_tostring(L, -1) ?? to_luastring("ERR unknown error"));
  try {
    const [text, where] = JSON.parse(raw) as [string, string];
    return where === "" ? text : `${text} script: ${sha}, on ${where}.`;
  } catch {
    return `ERR ${raw}`;
  }
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
    const key = lua.lua_type(S, 2) === lua.LUA_TSTRING ? to_jsstring(lua.lua_tostring(S, 2)) : "";
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
    const name = to_jsstring(lauxlib.luaL_tolstring(S, 2));
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

function setArray(L: State, name: string, values: readonly string[]): void {
  lua.lua_createtable(L, values.length, 0);
  values.forEach((v, i) => {
    lua.lua_pushstring(L, to_luastring(v));
    lua.lua_rawseti(L, -2, i + 1);
  });
  lua.lua_setglobal(L, to_luastring(name));
}

/** The value at `index` as Redis returns a script's result. */
function toClient(L: State, at: number): ScriptResult {
  // Absolute: the pushes below move relative indices.
  const index = at < 0 ? lua.lua_gettop(L) + at + 1 : at;
  const type = lua.lua_type(L, index);
  if (type === lua.LUA_TNUMBER) return { ok: true, value: Math.trunc(lua.lua_tonumber(L, index)) };
  if (type === lua.LUA_TSTRING) return { ok: true, value: to_jsstring(lua.lua_tostring(L, index)) };
  if (type === lua.LUA_TBOOLEAN) return { ok: true, value: lua.lua_toboolean(L, index) ? 1 : null };
  if (type !== lua.LUA_TTABLE) return { ok: true, value: null };
  // Raw: a script may return a table whose __index raises (the globals).
  lua.lua_pushstring(L, ERR);
  if (lua.lua_rawget(L, index) === lua.LUA_TSTRING) {
    return { ok: false, error: to_jsstring(lua.lua_tostring(L, -1)) };
  }
  lua.lua_settop(L, -2);
  lua.lua_pushstring(L, OK);
  if (lua.lua_rawget(L, index) === lua.LUA_TSTRING) {
    return { ok: true, value: to_jsstring(lua.lua_tostring(L, -1)) };
  }
  lua.lua_settop(L, -2);
  const items: unknown[] = [];
  for (let i = 1; ; i++) {
    if (lua.lua_rawgeti(L, index, i) === lua.LUA_TNIL) break;
    const item = toClient(L, -1);
    lua.lua_settop(L, -2);
    if (!item.ok) return item;
    items.push(item.value);
  }
  lua.lua_settop(L, -2);
  return { ok: true, value: items };
}

export type { Reply };
