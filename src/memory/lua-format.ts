/**
 * `tostring` and `string.format` as Redis's Lua 5.1 has them: a number written with `%.14g`
 * (`tostring(10/2)` is `"5"`), and `%d`, `%i`, `%u`, `%c`, `%o`, `%x`, `%X` taking any number and
 * truncating it toward zero as a C cast does (`string.format('%d', 3.7)` is `"3"`; Lua 5.3 refuses
 * a number with a fraction); `%e`, `%f`, `%g` as glibc writes them (`c-format.ts`). `%s`, `%q` and
 * `%a` are fengari's own, given one argument at a time (a number for `%s` and `%q` first becomes
 * its 5.1 text).
 *
 * @module
 */

import fengari from "fengari";
import { cFormat } from "./c-format";
import { formatNumber } from "./lua51";

const { lauxlib, lua, to_luastring } = fengari;
type State = ReturnType<typeof lauxlib.luaL_newstate>;

/** Bytes of a Lua string as a JS string of char codes 0–255 (format strings are bytes). */
export function bytesText(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    text += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return text;
}
const utf8 = new TextDecoder();

/**
 * A Lua string as the JavaScript text a client reading UTF-8 gets: bytes that are not UTF-8 become
 * U+FFFD (fengari's own conversion throws on them).
 */
export const utf8Text = (bytes: Uint8Array): string => utf8.decode(bytes);

export const textBytes = (text: string): Uint8Array =>
  Uint8Array.from(text, (c) => c.charCodeAt(0));

/** `tostring(v)`: a number as 5.1 writes it; anything else as Lua does. */
export function tostring(L: State): number {
  lauxlib.luaL_checkany(L, 1);
  if (lua.lua_type(L, 1) === lua.LUA_TNUMBER) {
    lua.lua_pushstring(L, to_luastring(formatNumber(lua.lua_tonumber(L, 1))));
  } else {
    lauxlib.luaL_tolstring(L, 1);
  }
  return 1;
}

const SPEC = /%([-+ #0]*)(\d*)(?:\.(\d*))?([a-zA-Z%])/y;
const TWO64 = 2n ** 64n;

/** A C integer conversion of `n` (truncated toward zero; negative as 64-bit unsigned for u/o/x). */
/** C's `(long long)x` on x86: -2^63 for nan and what 64 bits cannot hold. */
const toInt64 = (x: number): bigint =>
  Math.abs(x) < 2 ** 63 ? BigInt(Math.trunc(x)) : -(2n ** 63n);

/** C's `(unsigned long long)x` as gcc compiles it for x86 (2^63 for nan, 0 from 2^64 up). */
function toUint64(x: number): bigint {
  if (!(x >= 2 ** 63)) return BigInt.asUintN(64, toInt64(x));
  const high = x - 2 ** 63;
  return high < 2 ** 63 ? BigInt(Math.trunc(high)) + 2n ** 63n : 0n;
}

function integer(
  n: number,
  flags: string,
  width: string,
  precision: string | undefined,
  conv: string,
): string {
  const signed = conv === "d" || conv === "i" || conv === "c";
  const value = signed ? toInt64(n) : toUint64(n);
  if (conv === "c") return String.fromCharCode(Number(BigInt.asUintN(8, value)));
  const unsigned = value < 0n && !signed ? value + TWO64 : value;
  const magnitude = unsigned < 0n ? -unsigned : unsigned;
  const radix = conv === "o" ? 8 : conv === "x" || conv === "X" ? 16 : 10;
  let digits = magnitude.toString(radix);
  if (conv === "X") digits = digits.toUpperCase();
  if (precision !== undefined) digits = digits.padStart(Number(precision), "0");
  let prefix = "";
  if (signed)
    prefix = unsigned < 0n ? "-" : flags.includes("+") ? "+" : flags.includes(" ") ? " " : "";
  if (flags.includes("#") && magnitude !== 0n) {
    if (radix === 16) prefix = conv === "X" ? "0X" : "0x";
    if (radix === 8 && !digits.startsWith("0")) digits = `0${digits}`;
  }
  const size = Number(width || "0");
  if (flags.includes("-")) return (prefix + digits).padEnd(size, " ");
  if (flags.includes("0") && precision === undefined) {
    return prefix + digits.padStart(size - prefix.length, "0");
  }
  return (prefix + digits).padStart(size, " ");
}

/** `string.format(fmt, ...)` with 5.1's numbers; `original` is fengari's, at upvalue 1. */
export function format(L: State): number {
  const fmt = bytesText(lauxlib.luaL_checklstring(L, 1));
  const top = lua.lua_gettop(L);
  let out = "";
  let arg = 1;
  let at = 0;
  while (at < fmt.length) {
    const percent = fmt.indexOf("%", at);
    if (percent < 0) {
      out += fmt.slice(at);
      break;
    }
    out += fmt.slice(at, percent);
    SPEC.lastIndex = percent;
    const match = SPEC.exec(fmt);
    if (match === null) {
      // A malformed spec: fengari's own format names it.
      return callOriginal(L, fmt.slice(percent));
    }
    at = SPEC.lastIndex;
    const [spec, flags = "", width = "", precision, conv = ""] = match;
    if (conv === "%") {
      out += "%";
      continue;
    }
    arg++;
    if ("diucoxX".includes(conv)) {
      out += integer(lauxlib.luaL_checknumber(L, arg), flags, width, precision, conv);
      continue;
    }
    if ("eEfFgG".includes(conv)) {
      out += cFormat(lauxlib.luaL_checknumber(L, arg), conv, flags, width, precision);
      continue;
    }
    if (arg > top) lauxlib.luaL_argerror(L, arg, to_luastring("no value"));
    // 5.1's %s and %q take only strings and numbers (5.3's %s writes any value).
    if (conv === "s" || conv === "q") lauxlib.luaL_checklstring(L, arg);
    const number = lua.lua_type(L, arg) === lua.LUA_TNUMBER;
    if ((conv === "s" || conv === "q") && number) {
      out += bytesText(
        formatOne(L, spec, () =>
          lua.lua_pushstring(L, to_luastring(formatNumber(lua.lua_tonumber(L, arg)))),
        ),
      );
    } else {
      out += bytesText(formatOne(L, spec, () => lua.lua_pushvalue(L, arg)));
    }
  }
  lua.lua_pushstring(L, textBytes(out));
  return 1;
}

/** fengari's format of one spec and one value (pushed by `push`). */
function formatOne(L: State, spec: string, push: () => void): Uint8Array {
  lua.lua_pushvalue(L, lua.lua_upvalueindex(1));
  lua.lua_pushstring(L, textBytes(spec));
  push();
  lua.lua_call(L, 2, 1);
  const text = lua.lua_tolstring(L, -1);
  lua.lua_settop(L, -2);
  return text;
}

function callOriginal(L: State, fmt: string): number {
  lua.lua_pushvalue(L, lua.lua_upvalueindex(1));
  lua.lua_pushstring(L, textBytes(fmt));
  lua.lua_call(L, 1, 1);
  return 1;
}
