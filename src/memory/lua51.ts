/**
 * What makes fengari's Lua 5.3 look like Redis's Lua 5.1 to a script, where the difference is in
 * the VM rather than in a library: 5.3's operators (`//`, `&`, `|`, `~`, `<<`, `>>`, `::`) are
 * syntax errors, every number is a double (a numeral in the source or a string
 * read as a number becomes a float, as in 5.1, instead of a 32-bit fengari integer that wraps, hex
 * numerals included), a
 * number becomes text as 5.1's `%.14g` writes it (`10/2 .. ""` is `"5"`, not `"5.0"`), and a
 * table can be made read-only as Redis 7 makes the globals and the libraries ("Attempt to modify
 * a readonly table").
 *
 * fengari's own functions are patched, but the patches act only while {@link inLua51} runs a
 * memory node's compile or script (scripts run synchronously, so nothing else runs Lua then):
 * another user of fengari in the same program keeps plain Lua 5.3.
 *
 * @module
 */

import ldebug from "fengari/src/ldebug.js";
import llex from "fengari/src/llex.js";
import lobject from "fengari/src/lobject.js";
import lstring from "fengari/src/lstring.js";
import ltable from "fengari/src/ltable.js";
import { cFormat } from "./c-format";

/** The message Redis 7 gives a write to a protected table. */
export const READONLY = "Attempt to modify a readonly table";

const encoder = new TextEncoder();

/** Lua 5.1's text for a number (`LUA_NUMBER_FMT` `"%.14g"`, with glibc's inf and nan). */
export function formatNumber(n: number): string {
  // Most numbers a script writes: whole and below 10^14, which %.14g writes as they are.
  if (Number.isInteger(n) && Math.abs(n) < 1e14 && !Object.is(n, -0)) return String(n);
  return cFormat(n, "g", "", "", "14");
}

const HEX = /^\s*([+-]?)0[xX]([0-9a-fA-F]+)\s*$/;

/**
 * A hexadecimal numeral's value as 5.1 reads it (C's `strtod`: exact, then rounded to a double),
 * where fengari's 32-bit integers wrap (`0xffffffff` would be -1).
 */
function hexValue(s: Uint8Array): number | undefined {
  let text = "";
  for (let i = 0; i < s.length && s[i] !== 0; i++) text += String.fromCharCode(s[i] as number);
  const match = HEX.exec(text);
  if (match === null) return undefined;
  const value = Number(BigInt(`0x${match[2]}`));
  return match[1] === "-" ? -value : value;
}

let active = 0;

/** Run `body` with Lua 5.1's numbers and read-only tables (see the module's text). */
export function inLua51<T>(body: () => T): T {
  active++;
  try {
    return body();
  } finally {
    active--;
  }
}

/**
 * The read-only tables. A set beside fengari's table objects rather than a flag on them: a new
 * property on some of them would change their shape, and slow fengari's every table access.
 */
const readonlyTables = new WeakSet<object>();

/** Make `table` (fengari's table object, from `lua_topointer`) read-only, or writable again. */
export function setReadonly(table: object, readonly: boolean): void {
  if (readonly) readonlyTables.add(table);
  else readonlyTables.delete(table);
}

/** Whether `table` (fengari's table object) is read-only. */
export const isReadonly = (table: unknown): boolean =>
  typeof table === "object" && table !== null && readonlyTables.has(table);

interface TValue {
  value: unknown;
  ttisinteger(): boolean;
  ttisnumber(): boolean;
  setfltvalue(n: number): void;
  setsvalue(s: unknown): void;
}
type Table = object;

let patched = false;

/** Install the patches into fengari (once; inert outside {@link inLua51}). */
export function patchFengari(): void {
  if (patched) return;
  patched = true;
  const tostring = lobject.luaO_tostring;
  lobject.luaO_tostring = (L: unknown, obj: TValue) => {
    if (active === 0) return tostring(L, obj);
    obj.setsvalue(lstring.luaS_bless(L, encoder.encode(formatNumber(Number(obj.value)))));
  };
  const str2num = lobject.luaO_str2num;
  lobject.luaO_str2num = (s: Uint8Array, o: TValue) => {
    const size = str2num(s, o);
    if (active !== 0 && size !== 0 && o.ttisinteger())
      o.setfltvalue(hexValue(s) ?? Number(o.value));
    return size;
  };
  // Lua 5.3's operators that 5.1 does not have: 5.1's lexer reads their first character and its
  // parser stops there ("unexpected symbol near '/'").
  const firstChar = new Map([
    [llex.RESERVED.TK_IDIV, 0x2f],
    [llex.RESERVED.TK_SHL, 0x3c],
    [llex.RESERVED.TK_SHR, 0x3e],
    [llex.RESERVED.TK_DBCOLON, 0x3a],
    [0x26, 0x26], // &
    [0x7c, 0x7c], // |
    [0x7e, 0x7e], // ~ (not ~=)
  ]);
  const next = llex.luaX_next;
  llex.luaX_next = (ls: { t: { token: number } }) => {
    next(ls);
    const first = active === 0 ? undefined : firstChar.get(ls.t.token);
    if (first !== undefined) {
      ls.t.token = first;
      llex.luaX_syntaxerror(ls, encoder.encode("unexpected symbol"));
    }
  };
  const setfrom = ltable.luaH_setfrom;
  ltable.luaH_setfrom = (L: unknown, t: Table, key: unknown, value: unknown) => {
    if (active !== 0 && readonlyTables.has(t)) ldebug.luaG_runerror(L, encoder.encode(READONLY));
    return setfrom(L, t, key, value);
  };
  const setint = ltable.luaH_setint;
  ltable.luaH_setint = (t: Table, key: number, value: unknown) => {
    // Only C code writes with this (a script's writes go through luaH_setfrom): a bug, not a script.
    if (active !== 0 && readonlyTables.has(t)) throw new Error(READONLY);
    return setint(t, key, value);
  };
}
