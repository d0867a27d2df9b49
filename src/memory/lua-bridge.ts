/**
 * Runs scripts in fengari (Lua 5.3 in JS) as Redis 7.0 runs them in its Lua 5.1: `KEYS` and `ARGV`
 * as globals in the environment of `lua-sandbox.ts` (Redis's libraries in their 5.1 shape, its
 * protected globals), numbers as 5.1 has them (`lua51.ts`), errors in Redis 7's form
 * (`… script: <sha>, on @user_script:<line>.`), and the script's result converted as Redis
 * converts it for the client (numbers truncated to integers, tables to arrays up to the first nil,
 * `true` to 1, `false`/nil to nil). A script running past its time limit (Redis's 5 s
 * `lua-time-limit`) is stopped with the error redis-server gives a script stopped by `SCRIPT KILL`.
 *
 * One Lua state serves every node. Nothing a script leaves behind survives its call (the tables it
 * could write to between calls are read-only, and `KEYS`/`ARGV` are set per call; `math.random`'s
 * generator is the node's), so no node's script sees another's: the same as a state per node,
 * with each script compiled once instead of per node.
 *
 * @module
 */

import fengari from "fengari";
import type { Reply } from "./keyspace";
import { utf8Text } from "./lua-format";
import { Rand48 } from "./lua-random";
import type * as redis from "./lua-redis";
import { messageHandler, raise } from "./lua-redis";
import { openSandbox } from "./lua-sandbox";
import { inLua51, patchFengari, setReadonly } from "./lua51";

const { lauxlib, lua, to_luastring } = fengari;
type State = ReturnType<typeof lauxlib.luaL_newstate>;

/** A script's result for the client, or the error Redis would reply. */
export type ScriptResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string };

/** What a script run reaches: the node's commands and, if it has one, a synchronous SHA-1. */
export type ScriptHost = redis.Host;

/** How long a script may run before it is stopped: Redis's `lua-time-limit` default. */
export const DEFAULT_TIME_LIMIT_MS = 5_000;

const OK = to_luastring("ok");
const ERR = to_luastring("err");

/**
 * @example
 * const bridge = new LuaBridge();
 * const host = { command: (argv) => keyspace.command(now, argv), random: new Rand48(), sha1: undefined, timeLimitMs: 5_000 };
 * bridge.run(source, ["k"], ["token"], host, sha);
 */
export class LuaBridge {
  readonly #L: State;
  readonly #globals: object;
  readonly #compiled = new Map<string, number>();
  #host: redis.Host = {
    command: () => null,
    random: new Rand48(),
    sha1: undefined,
    timeLimitMs: DEFAULT_TIME_LIMIT_MS,
  };

  constructor() {
    patchFengari();
    const L = lauxlib.luaL_newstate();
    this.#L = L;
    this.#globals = inLua51(() => openSandbox(L, () => this.#host));
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
      lua.lua_pushcfunction(L, messageHandler);
      lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
      lua.lua_sethook(L, timeLimit(host.timeLimitMs), lua.LUA_MASKCOUNT, HOOK_EVERY);
      const status = lua.lua_pcall(L, 0, 1, 1);
      lua.lua_sethook(L, null, 0, 0);
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
      const message = utf8Text(lua.lua_tostring(L, -1)).replace(/ <eof>/g, " '<eof>'");
      lua.lua_settop(L, 0);
      return `ERR Error compiling script (new function): ${message}`;
    }
    const ref = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    this.#compiled.set(source, ref);
    return ref;
  }
}

/** Instructions between two looks at the clock (a look costs about as much as 100 instructions). */
const HOOK_EVERY = 100_000;
/** Looks at a clock that never moved before a script counts as past its limit (see `timeLimit`). */
const FROZEN_LOOKS = 2_000;

/** What redis-server answers the caller of a script stopped by `SCRIPT KILL`. */
export const SCRIPT_KILLED = "ERR Script killed by user with SCRIPT KILL...";

/**
 * The count hook that stops a script running past `limitMs` (performance.now()), as `SCRIPT KILL`
 * stops it on redis-server: a memory node has no other client to send it, and an endless loop would
 * otherwise freeze the program. Once past, it raises on every instruction, so a `pcall` in the
 * script cannot keep it running. Where the clock does not move while code runs (workerd), a
 * script stops after `FROZEN_LOOKS` looks, some 2·10^8 instructions.
 */
function timeLimit(limitMs: number): (L: State) => void {
  const started = performance.now();
  let looks = 0;
  let killed = false;
  const hook = (S: State): void => {
    looks++;
    const elapsed = performance.now() - started;
    if (!killed && elapsed <= limitMs && (elapsed > 0 || looks < FROZEN_LOOKS)) return;
    killed = true;
    lua.lua_sethook(S, hook, lua.LUA_MASKCOUNT, 1);
    raise(S, SCRIPT_KILLED);
  };
  return hook;
}

/** The error reply of a failed script: the handler's `[text, where]`, with the script's SHA-1. */
function failure(L: State, sha: string): string {
  const raw = utf8Text(lua.lua_tostring(L, -1) ?? to_luastring("ERR unknown error"));
  try {
    const [text, where] = JSON.parse(raw) as [string, string];
    return where === "" ? text : `${text} script: ${sha}, on ${where}.`;
  } catch {
    return `ERR ${raw}`;
  }
}

function setArray(L: State, name: string, values: readonly string[]): void {
  lua.lua_createtable(L, values.length, 0);
  values.forEach((v, i) => {
    lua.lua_pushstring(L, to_luastring(v));
    lua.lua_rawseti(L, -2, i + 1);
  });
  lua.lua_setglobal(L, to_luastring(name));
}

/**
 * A Lua number as Redis replies it: C's `(long long)` cast, which on x86 gives -2^63 for what a
 * 64-bit integer cannot hold (inf, nan, 1e300, 2^63).
 */
function integerReply(n: number): number {
  return Math.abs(n) < 2 ** 63 ? Math.trunc(n) + 0 : -(2 ** 63);
}

/** The value at `index` as Redis returns a script's result. */
function toClient(L: State, at: number): ScriptResult {
  // Absolute: the pushes below move relative indices.
  const index = at < 0 ? lua.lua_gettop(L) + at + 1 : at;
  const type = lua.lua_type(L, index);
  if (type === lua.LUA_TNUMBER)
    return { ok: true, value: integerReply(lua.lua_tonumber(L, index)) };
  if (type === lua.LUA_TSTRING) return { ok: true, value: utf8Text(lua.lua_tostring(L, index)) };
  if (type === lua.LUA_TBOOLEAN) return { ok: true, value: lua.lua_toboolean(L, index) ? 1 : null };
  if (type !== lua.LUA_TTABLE) return { ok: true, value: null };
  // Raw: a script may return a table whose __index raises (the globals).
  lua.lua_pushstring(L, ERR);
  if (lua.lua_rawget(L, index) === lua.LUA_TSTRING) {
    return { ok: false, error: utf8Text(lua.lua_tostring(L, -1)) };
  }
  lua.lua_settop(L, -2);
  lua.lua_pushstring(L, OK);
  if (lua.lua_rawget(L, index) === lua.LUA_TSTRING) {
    return { ok: true, value: utf8Text(lua.lua_tostring(L, -1)) };
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
