// The slice of fengari's API (Lua 5.3 in JS) that the simulated node uses; fengari ships no types.
declare module "fengari" {
  type State = object;
  export const lua: {
    LUA_OK: number;
    LUA_REGISTRYINDEX: number;
    LUA_TNIL: number;
    LUA_TBOOLEAN: number;
    LUA_TNUMBER: number;
    LUA_TSTRING: number;
    LUA_TTABLE: number;
    lua_gettop(L: State): number;
    lua_settop(L: State, index: number): void;
    lua_type(L: State, index: number): number;
    lua_tostring(L: State, index: number): Uint8Array;
    lua_tonumber(L: State, index: number): number;
    lua_toboolean(L: State, index: number): boolean;
    lua_pushnil(L: State): void;
    lua_pushboolean(L: State, value: boolean): void;
    lua_pushnumber(L: State, value: number): void;
    lua_pushinteger(L: State, value: number): void;
    lua_pushstring(L: State, value: Uint8Array): void;
    lua_pushcfunction(L: State, fn: (L: State) => number): void;
    lua_createtable(L: State, narr: number, nrec: number): void;
    lua_rawseti(L: State, index: number, n: number): void;
    lua_rawgeti(L: State, index: number, n: number): number;
    lua_rawlen(L: State, index: number): number;
    lua_setfield(L: State, index: number, key: Uint8Array): void;
    lua_getfield(L: State, index: number, key: Uint8Array): number;
    lua_setglobal(L: State, name: Uint8Array): void;
    lua_pcall(L: State, nargs: number, nresults: number, handler: number): number;
    lua_error(L: State): never;
  };
  export const lauxlib: {
    luaL_newstate(): State;
    luaL_loadbuffer(L: State, source: Uint8Array, size: null, name: Uint8Array): number;
    luaL_ref(L: State, table: number): number;
  };
  export const lualib: { luaL_openlibs(L: State): void };
  export function to_luastring(text: string): Uint8Array;
  export function to_jsstring(bytes: Uint8Array): string;
}
