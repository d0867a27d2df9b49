/**
 * The `redis` library a script sees, as Redis 7.0 gives it: `redis.call` / `redis.pcall` into the
 * node's keyspace (a nil bulk becomes `false`, a status `{ok=…}`, an error `{err=…}`, an integer a
 * number; a Lua number argument becomes its `%.17g` text), `redis.error_reply`,
 * `redis.status_reply`, `redis.sha1hex`, `redis.log` and its levels, `redis.setresp(2)`; Redis's
 * `pcall`, which hands a script an error raised by `redis.call` as its text; and the message
 * handler that gives a failed script Redis's `… script: <sha>, on @user_script:<line>.`
 *
 * What a memory node does not model raises an error naming it ({@link notModelled}).
 *
 * @module
 */

import fengari from "fengari";
import { cFormat } from "./c-format";
import { ARITY, type Reply } from "./keyspace";
import { bytesText, textBytes, utf8Text } from "./lua-format";
import type { Rand48 } from "./lua-random";
import { formatNumber } from "./lua51";

const { lauxlib, lua, to_jsstring, to_luastring } = fengari;
type State = ReturnType<typeof lauxlib.luaL_newstate>;

const OK = to_luastring("ok");
const ERR = to_luastring("err");

/** What {@link notModelled} errors start with (the memory node recognises it). */
export const NOT_MODELLED = "memory nodes do not model";

/** The error text for `name`, which a memory node does not model. */
export const notModelled = (name: string, why: string): string =>
  `ERR ${NOT_MODELLED} '${name}' (${why})`;

/**
 * What a script reaches on its node: the node's commands, its `math.random` generator and, if it
 * has one, a synchronous SHA-1.
 */
export interface Host {
  command(argv: string[]): Reply;
  readonly random: Rand48;
  readonly sha1: ((text: string) => string) | undefined;
  /** How long (ms, performance.now()) a script may run before it is stopped. */
  readonly timeLimitMs: number;
}

/** Redis's error text for a message: a leading `-CODE` kept, else `ERR` added. */
export function errorText(message: string): string {
  let code = "ERR";
  let text = message;
  if (message.startsWith("-")) {
    const space = message.indexOf(" ");
    if (space < 0) text = message.slice(1);
    else {
      code = message.slice(1, space);
      text = message.slice(space + 1);
    }
  }
  return `${code} ${text.replace(/^[\r\n]+|[\r\n]+$/g, "")}`;
}

/** Push `{err = text}`. */
function pushError(L: State, text: string): void {
  lua.lua_createtable(L, 0, 1);
  lua.lua_pushstring(L, to_luastring(text));
  lua.lua_setfield(L, -2, ERR);
}

/** Raise `{err = text}` (no position: Redis raises its errors as tables). */
export function raise(L: State, text: string): never {
  pushError(L, text);
  return lua.lua_error(L);
}

/**
 * Redis 7.0's text for a Lua number argument: C's `%.17g` (`0.1` is `0.10000000000000001`, `1e20`
 * is `1e+20`, `-0` is `-0`, infinities `inf`/`-inf`, `0/0` glibc's `-nan`).
 */
const numberText = (n: number): string =>
  Number.isInteger(n) && Math.abs(n) < 1e17 && !Object.is(n, -0)
    ? String(n)
    : cFormat(n, "g", "", "", "17");

/** An error of `redis.call` (raised) or `redis.pcall` (returned). */
function fail(L: State, raiseErrors: boolean, text: string): number {
  if (raiseErrors) raise(L, text);
  pushError(L, text);
  return 1;
}

/** `redis.call` (raise = true) / `redis.pcall`. */
export function call(L: State, host: Host, raiseErrors: boolean): number {
  const top = lua.lua_gettop(L);
  if (top === 0)
    return fail(L, raiseErrors, "ERR Please specify at least one argument for this redis lib call");
  const argv: string[] = [];
  for (let i = 1; i <= top; i++) {
    const type = lua.lua_type(L, i);
    if (type === lua.LUA_TNUMBER) argv.push(numberText(lua.lua_tonumber(L, i)));
    else if (type === lua.LUA_TSTRING) argv.push(utf8Text(lua.lua_tostring(L, i)));
    else
      return fail(
        L,
        raiseErrors,
        "ERR Lua redis lib command arguments must be strings or integers",
      );
  }
  const arity = ARITY.get((argv[0] as string).toUpperCase());
  if (arity !== undefined && (arity > 0 ? argv.length !== arity : argv.length < -arity)) {
    return fail(L, raiseErrors, "ERR Wrong number of args calling Redis command from script");
  }
  const reply = host.command(argv);
  if (reply !== null && typeof reply === "object" && "err" in reply) {
    return fail(L, raiseErrors, reply.err);
  }
  pushReply(L, reply);
  return 1;
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

/** `redis.error_reply(text)` and `redis.status_reply(text)`. */
export function reply(L: State, field: "err" | "ok"): number {
  if (lua.lua_gettop(L) !== 1 || lua.lua_type(L, 1) !== lua.LUA_TSTRING) {
    pushError(L, "ERR wrong number or type of arguments");
    return 1;
  }
  const text = utf8Text(lua.lua_tostring(L, 1));
  if (field === "err") pushError(L, errorText(text.startsWith("-") ? text : `-${text}`));
  else {
    lua.lua_createtable(L, 0, 1);
    lua.lua_pushstring(L, to_luastring(text));
    lua.lua_setfield(L, -2, OK);
  }
  return 1;
}

/** `redis.sha1hex(text)`: with the node's synchronous SHA-1, else refused by name. */
export function sha1hex(L: State, host: Host): number {
  if (lua.lua_gettop(L) !== 1) raise(L, "ERR wrong number of arguments");
  if (host.sha1 === undefined) {
    raise(L, notModelled("redis.sha1hex", "this platform has no synchronous SHA-1"));
  }
  const text = lua.lua_tolstring(L, 1);
  lua.lua_pushstring(L, to_luastring(host.sha1(text === null ? "" : utf8Text(text))));
  return 1;
}

/** `redis.log(level, …)`: checked as Redis checks it; the memory node keeps no server log. */
export function log(L: State): number {
  const top = lua.lua_gettop(L);
  if (top < 2) raise(L, "ERR redis.log() requires two arguments or more.");
  if (lua.lua_type(L, 1) !== lua.LUA_TNUMBER)
    raise(L, "ERR First argument must be a number (log level).");
  const level = lua.lua_tonumber(L, 1);
  if (!(level >= 0 && level <= 3)) raise(L, "ERR Invalid debug level.");
  return 0;
}

/** `redis.setresp(2)`; RESP3 replies to scripts are not modelled. */
export function setresp(L: State): number {
  if (lua.lua_gettop(L) !== 1) raise(L, "ERR redis.setresp() requires one argument.");
  const resp = lua.lua_tonumber(L, 1);
  if (resp !== 2 && resp !== 3) raise(L, "ERR RESP version must be 2 or 3.");
  if (resp === 3) raise(L, notModelled("redis.setresp(3)", "scripts get RESP2 replies"));
  return 0;
}

/** `error(message [, level])` as in 5.1: a number message gets the position too. */
export function error(L: State): number {
  const level = lauxlib.luaL_optinteger(L, 2, 1);
  lua.lua_settop(L, 1);
  const type = lua.lua_type(L, 1);
  if ((type === lua.LUA_TSTRING || type === lua.LUA_TNUMBER) && level > 0) {
    lauxlib.luaL_where(L, level);
    lua.lua_pushvalue(L, 1);
    lua.lua_concat(L, 2);
  }
  return lua.lua_error(L);
}

const TYPE_ERROR =
  /attempt to (index|call|concatenate|perform arithmetic on) a (\S+) value \((\w+) '([^']*)'\)/;

/** A Lua 5.3 type error in 5.1's words (`attempt to index field 'a' (a nil value)`). */
export const lua51Message = (text: string): string =>
  text.replace(TYPE_ERROR, "attempt to $1 $3 '$4' (a $2 value)");

/** Redis's `pcall`: an error `{err=…}` raised by `redis.call` is caught as its text. */
export function pcall(L: State): number {
  lauxlib.luaL_checkany(L, 1);
  const status = lua.lua_pcall(L, lua.lua_gettop(L) - 1, lua.LUA_MULTRET, 0);
  if (status === lua.LUA_OK) {
    lua.lua_pushboolean(L, true);
    lua.lua_insert(L, 1);
    return lua.lua_gettop(L);
  }
  if (lua.lua_type(L, -1) === lua.LUA_TTABLE) {
    if (lua.lua_getfield(L, -1, ERR) === lua.LUA_TSTRING) lua.lua_remove(L, -2);
    else lua.lua_settop(L, -2);
  } else if (lua.lua_type(L, -1) === lua.LUA_TSTRING) {
    // Bytes, not UTF-8: an error may carry any string.
    const text = bytesText(lua.lua_tolstring(L, -1));
    lua.lua_settop(L, -2);
    lua.lua_pushstring(L, textBytes(lua51Message(text)));
  }
  lua.lua_pushboolean(L, false);
  lua.lua_insert(L, -2);
  return 2;
}

/**
 * The message handler of a script's call: the error's text (an `{err=…}` table's as it is,
 * anything else with `ERR ` before it) and where it was raised, as `{err, source, line}`.
 */
export function messageHandler(L: State): number {
  let text: string;
  if (lua.lua_type(L, 1) === lua.LUA_TTABLE && lua.lua_getfield(L, 1, ERR) === lua.LUA_TSTRING) {
    text = utf8Text(lua.lua_tostring(L, -1));
  } else if (lua.lua_type(L, 1) === lua.LUA_TNUMBER) {
    text = `ERR ${formatNumber(lua.lua_tonumber(L, 1))}`;
  } else {
    lua.lua_settop(L, 1);
    text = `ERR ${utf8Text(lauxlib.luaL_tolstring(L, 1))}`;
  }
  const ar = new lua.lua_Debug();
  let found = lua.lua_getstack(L, 1, ar) !== 0 && lua.lua_getinfo(L, to_luastring("Sl"), ar) !== 0;
  // fengari says "J" for a function of the host (JavaScript) where C Lua says "C".
  if (found && /^[CJ]$/.test(to_jsstring(ar.what))) {
    found = lua.lua_getstack(L, 2, ar) !== 0 && lua.lua_getinfo(L, to_luastring("Sl"), ar) !== 0;
  }
  const where = found ? `${to_jsstring(ar.source)}:${ar.currentline}` : "";
  lua.lua_pushstring(L, to_luastring(JSON.stringify([lua51Message(text), where])));
  return 1;
}
