// The slice of fengari's API (Lua 5.3 in JS) that the memory node uses; fengari ships no types.
// CommonJS: imported as a default import.
type FengariState = object;
type FengariLib = (L: FengariState) => number;

declare module "fengari" {
  const fengari: {
    lua: {
      LUA_OK: number;
      LUA_REGISTRYINDEX: number;
      LUA_TNIL: number;
      LUA_TBOOLEAN: number;
      LUA_TNUMBER: number;
      LUA_TSTRING: number;
      LUA_TTABLE: number;
      lua_gettop(L: FengariState): number;
      lua_settop(L: FengariState, index: number): void;
      lua_type(L: FengariState, index: number): number;
      lua_tostring(L: FengariState, index: number): Uint8Array;
      lua_tonumber(L: FengariState, index: number): number;
      lua_toboolean(L: FengariState, index: number): boolean;
      lua_pushnil(L: FengariState): void;
      lua_pushboolean(L: FengariState, value: boolean): void;
      lua_pushnumber(L: FengariState, value: number): void;
      lua_pushinteger(L: FengariState, value: number): void;
      lua_pushstring(L: FengariState, value: Uint8Array): void;
      lua_pushcfunction(L: FengariState, fn: (L: FengariState) => number): void;
      lua_createtable(L: FengariState, narr: number, nrec: number): void;
      lua_rawseti(L: FengariState, index: number, n: number): void;
      lua_rawgeti(L: FengariState, index: number, n: number): number;
      lua_rawlen(L: FengariState, index: number): number;
      lua_setfield(L: FengariState, index: number, key: Uint8Array): void;
      lua_getfield(L: FengariState, index: number, key: Uint8Array): number;
      lua_setglobal(L: FengariState, name: Uint8Array): void;
      lua_pcall(L: FengariState, nargs: number, nresults: number, handler: number): number;
      lua_error(L: FengariState): never;
    };
    lauxlib: {
      luaL_newstate(): FengariState;
      luaL_loadbuffer(L: FengariState, source: Uint8Array, size: null, name: Uint8Array): number;
      luaL_ref(L: FengariState, table: number): number;
      luaL_requiref(L: FengariState, name: Uint8Array, open: FengariLib, global: number): void;
    };
    lualib: {
      luaopen_base: FengariLib;
      luaopen_table: FengariLib;
      luaopen_string: FengariLib;
      luaopen_math: FengariLib;
    };
    to_luastring(text: string): Uint8Array;
    to_jsstring(bytes: Uint8Array): string;
  };
  export default fengari;
}
