// biome-ignore-all lint/suspicious/noExplicitAny: the patched functions take fengari objects
// The slice of fengari's API (Lua 5.3 in JS) that the memory node uses; fengari ships no types.
// CommonJS: imported as a default import.
type FengariState = object;
type FengariLib = (L: FengariState) => number;

declare module "fengari" {
  const fengari: {
    lua: {
      LUA_OK: number;
      LUA_MASKCOUNT: number;
      LUA_TNONE: number;
      LUA_TFUNCTION: number;
      LUA_REGISTRYINDEX: number;
      LUA_TNIL: number;
      LUA_TBOOLEAN: number;
      LUA_TNUMBER: number;
      LUA_TSTRING: number;
      LUA_TTABLE: number;
      LUA_TLIGHTUSERDATA: number;
      LUA_MULTRET: number;
      lua_Debug: new () => {
        what: Uint8Array;
        source: Uint8Array;
        currentline: number;
      };
      lua_getstack(L: FengariState, level: number, ar: object): number;
      lua_getinfo(L: FengariState, what: Uint8Array, ar: object): number;
      lua_insert(L: FengariState, index: number): void;
      lua_remove(L: FengariState, index: number): void;
      lua_pushvalue(L: FengariState, index: number): void;
      lua_upvalueindex(n: number): number;
      lua_call(L: FengariState, nargs: number, nresults: number): void;
      lua_tolstring(L: FengariState, index: number): Uint8Array;
      lua_pushcclosure(L: FengariState, fn: (L: FengariState) => number, n: number): void;
      lua_getglobal(L: FengariState, name: Uint8Array): number;
      lua_pushglobaltable(L: FengariState): void;
      lua_topointer(L: FengariState, index: number): unknown;
      lua_getmetatable(L: FengariState, index: number): boolean;
      lua_setmetatable(L: FengariState, index: number): void;
      lua_next(L: FengariState, index: number): number;
      lua_rawget(L: FengariState, index: number): number;
      lua_rawset(L: FengariState, index: number): void;
      lua_pushlightuserdata(L: FengariState, p: unknown): void;
      lua_touserdata(L: FengariState, index: number): unknown;
      lua_typename(L: FengariState, type: number): Uint8Array;
      lua_concat(L: FengariState, n: number): void;
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
      lua_checkstack(L: FengariState, n: number): boolean;
      lua_sethook(
        L: FengariState,
        hook: ((L: FengariState, ar: unknown) => void) | null,
        mask: number,
        count: number,
      ): void;
    };
    lauxlib: {
      luaL_newstate(): FengariState;
      luaL_loadbuffer(L: FengariState, source: Uint8Array, size: null, name: Uint8Array): number;
      luaL_ref(L: FengariState, table: number): number;
      luaL_requiref(L: FengariState, name: Uint8Array, open: FengariLib, global: number): void;
      luaL_checkany(L: FengariState, arg: number): void;
      luaL_loadstring(L: FengariState, source: Uint8Array): number;
      luaL_tolstring(L: FengariState, index: number): Uint8Array;
      luaL_checklstring(L: FengariState, arg: number): Uint8Array;
      luaL_checknumber(L: FengariState, arg: number): number;
      luaL_optinteger(L: FengariState, arg: number, def: number): number;
      luaL_checkinteger(L: FengariState, arg: number): number;
      luaL_argerror(L: FengariState, arg: number, message: Uint8Array): never;
      luaL_argcheck(L: FengariState, ok: boolean, arg: number, message: Uint8Array): void;
      luaL_error(L: FengariState, message: Uint8Array): never;
      luaL_where(L: FengariState, level: number): void;
    };
    lualib: {
      luaopen_base: FengariLib;
      luaopen_table: FengariLib;
      luaopen_string: FengariLib;
      luaopen_math: FengariLib;
      luaopen_coroutine: FengariLib;
      luaL_openlibs(L: FengariState): void;
    };
    to_luastring(text: string): Uint8Array;
    to_jsstring(bytes: Uint8Array): string;
  };
  export default fengari;
}

// fengari's internals that lua51.ts patches (number text, numerals, read-only tables). Their
// exports are read through the module object by fengari itself, so a patch reaches its callers.
declare module "fengari/src/lobject.js" {
  const lobject: {
    luaO_tostring(L: unknown, obj: any): void;
    luaO_str2num(s: Uint8Array, o: any): number;
  };
  export default lobject;
}
declare module "fengari/src/ltable.js" {
  const ltable: {
    luaH_setfrom(L: unknown, t: any, key: unknown, value: unknown): void;
    luaH_setint(t: any, key: number, value: unknown): void;
  };
  export default ltable;
}
declare module "fengari/src/lstring.js" {
  const lstring: { luaS_bless(L: unknown, bytes: Uint8Array): unknown };
  export default lstring;
}
declare module "fengari/src/ldebug.js" {
  const ldebug: { luaG_runerror(L: unknown, message: Uint8Array): never };
  export default ldebug;
}
declare module "fengari/src/llex.js" {
  const llex: {
    RESERVED: Record<"TK_IDIV" | "TK_SHL" | "TK_SHR" | "TK_DBCOLON", number>;
    luaX_next(ls: any): void;
    luaX_syntaxerror(ls: any, message: Uint8Array): never;
  };
  export default llex;
}
