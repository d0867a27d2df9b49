/**
 * Runs edgelock's Lua scripts in fengari (Lua 5.3 in JS) the way Redis runs them: `KEYS` and
 * `ARGV` as globals, `redis.call`/`redis.pcall` into the node's keyspace with Redis's conversions
 * both ways (a nil bulk becomes `false`, a status `{ok=…}`, an error `{err=…}`; a Lua number
 * passed to a command becomes its integer text, as Redis formats it), and the script's result
 * converted as Redis converts it for the client (numbers truncated to integers, tables to arrays
 * up to the first nil, `true` to 1, `false`/nil to nil).
 *
 * One Lua state per bridge; each script source is compiled once and kept in the registry.
 *
 * @module
 */

import fengari from "fengari";
import type { Reply } from "./keyspace";

const { lauxlib, lua, lualib, to_jsstring, to_luastring } = fengari;
type State = ReturnType<typeof lauxlib.luaL_newstate>;

/**
 * The libraries Redis gives scripts that edgelock's use (Redis adds struct, cjson, bit and
 * cmsgpack, which they do not). No io, os, debug or package: as in Redis, nothing a script could
 * reach the host with.
 */
const LIBRARIES = [
  ["_G", lualib.luaopen_base],
  ["table", lualib.luaopen_table],
  ["string", lualib.luaopen_string],
  ["math", lualib.luaopen_math],
] as const;

/** A script's result for the client, or the error Redis would reply. */
export type ScriptResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string };

const OK = to_luastring("ok");
const ERR = to_luastring("err");

/**
 * @example
 * const bridge = new LuaBridge((argv) => keyspace.command(now, argv));
 * bridge.run(source, ["k"], ["token"]);
 */
export class LuaBridge {
  readonly #L: State;
  readonly #compiled = new Map<string, number>();
  #command: (argv: string[]) => Reply = () => null;

  constructor() {
    const L = lauxlib.luaL_newstate();
    for (const [name, open] of LIBRARIES) {
      lauxlib.luaL_requiref(L, to_luastring(name), open, 1);
      lua.lua_settop(L, 0);
    }
    lua.lua_createtable(L, 0, 2);
    lua.lua_pushcfunction(L, (S) => this.#call(S, true));
    lua.lua_setfield(L, -2, to_luastring("call"));
    lua.lua_pushcfunction(L, (S) => this.#call(S, false));
    lua.lua_setfield(L, -2, to_luastring("pcall"));
    lua.lua_setglobal(L, to_luastring("redis"));
    this.#L = L;
  }

  /** Run `source` with `keys` and `args`; `command` executes each `redis.call`. */
  run(
    source: string,
    keys: readonly string[],
    args: readonly string[],
    command: (argv: string[]) => Reply,
  ): ScriptResult {
    const L = this.#L;
    const ref = this.#compile(source);
    if (typeof ref === "string") return { ok: false, error: ref };
    this.#command = command;
    setArray(L, "KEYS", keys);
    setArray(L, "ARGV", args);
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
    const status = lua.lua_pcall(L, 0, 1, 0);
    try {
      if (status !== lua.LUA_OK) {
        return {
          ok: false,
          error: `ERR Error running script: ${to_jsstring(lua.lua_tostring(L, -1))}`,
        };
      }
      return toClient(L, -1);
    } finally {
      lua.lua_settop(L, 0);
    }
  }

  #compile(source: string): number | string {
    const known = this.#compiled.get(source);
    if (known !== undefined) return known;
    const L = this.#L;
    const name = to_luastring("@user_script");
    if (lauxlib.luaL_loadbuffer(L, to_luastring(source), null, name) !== lua.LUA_OK) {
      const error = `ERR Error compiling script: ${to_jsstring(lua.lua_tostring(L, -1))}`;
      lua.lua_settop(L, 0);
      return error;
    }
    const ref = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    this.#compiled.set(source, ref);
    return ref;
  }

  /** `redis.call` (raise = true) / `redis.pcall`. */
  #call(L: State, raise: boolean): number {
    const argv: string[] = [];
    const top = lua.lua_gettop(L);
    for (let i = 1; i <= top; i++) {
      const type = lua.lua_type(L, i);
      if (type === lua.LUA_TNUMBER) argv.push(numberText(lua.lua_tonumber(L, i)));
      else if (type === lua.LUA_TSTRING) argv.push(to_jsstring(lua.lua_tostring(L, i)));
      else return fail(L, "ERR Lua redis lib command arguments must be strings or integers", raise);
    }
    const reply = this.#command(argv);
    if (reply !== null && typeof reply === "object" && "err" in reply) {
      return fail(L, reply.err, raise);
    }
    pushReply(L, reply);
    return 1;
  }
}

/** Redis's text for a Lua number argument (an integer has no fraction). */
const numberText = (n: number): string =>
  Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(17)));

function fail(L: State, message: string, raise: boolean): number {
  if (raise) {
    lua.lua_pushstring(L, to_luastring(message));
    return lua.lua_error(L);
  }
  lua.lua_createtable(L, 0, 1);
  lua.lua_pushstring(L, to_luastring(message));
  lua.lua_setfield(L, -2, ERR);
  return 1;
}

function setArray(L: State, name: string, values: readonly string[]): void {
  lua.lua_createtable(L, values.length, 0);
  values.forEach((v, i) => {
    lua.lua_pushstring(L, to_luastring(v));
    lua.lua_rawseti(L, -2, i + 1);
  });
  lua.lua_setglobal(L, to_luastring(name));
}

function pushReply(L: State, reply: Reply): void {
  if (reply === null) lua.lua_pushboolean(L, false);
  else if (typeof reply === "number") lua.lua_pushnumber(L, reply);
  else if (typeof reply === "string") lua.lua_pushstring(L, to_luastring(reply));
  else if (Array.isArray(reply)) {
    lua.lua_createtable(L, reply.length, 0);
    reply.forEach((item, i) => {
      pushReply(L, item);
      lua.lua_rawseti(L, -2, i + 1);
    });
  } else if ("ok" in reply) {
    lua.lua_createtable(L, 0, 1);
    lua.lua_pushstring(L, to_luastring(reply.ok));
    lua.lua_setfield(L, -2, OK);
  }
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
  if (lua.lua_getfield(L, index, ERR) === lua.LUA_TSTRING) {
    return { ok: false, error: to_jsstring(lua.lua_tostring(L, -1)) };
  }
  lua.lua_settop(L, -2);
  if (lua.lua_getfield(L, index, OK) === lua.LUA_TSTRING) {
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
