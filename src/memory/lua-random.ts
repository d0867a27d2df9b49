/**
 * `math.random` and `math.randomseed` as Redis 7.0 gives them to scripts: its own `rand48`
 * generator (`redisLrand48`), one per server, seeded with rand48's default when the server starts
 * and never reseeded between scripts, so a fresh node's scripts draw the same sequence as a fresh
 * redis-server's. Each memory node keeps its own generator ({@link Rand48}), restarted with it.
 *
 * @module
 */

import fengari from "fengari";

const { lauxlib, lua, to_luastring } = fengari;
type State = ReturnType<typeof lauxlib.luaL_newstate>;

const MASK = (1n << 48n) - 1n;
const DEFAULT = 0x1234abcd330en;
const MAX = 2147483647; // REDIS_LRAND48_MAX

/**
 * One node's generator state.
 *
 * @example
 * const random = new Rand48();
 * random.next(); // the first draw of a fresh redis-server
 */
export class Rand48 {
  #x = DEFAULT;

  /** Back to the state of a server that just started. */
  reset(): void {
    this.#x = DEFAULT;
  }

  /** `srand48(seed)`: the high 32 bits from the seed, the low 16 bits 0x330E. */
  seed(seed: number): void {
    this.#x = ((BigInt(seed | 0) & 0xffffffffn) << 16n) | 0x330en;
  }

  /** `lrand48()`: the next 31-bit draw. */
  next(): number {
    this.#x = (0x5deece66dn * this.#x + 0xbn) & MASK;
    return Number(this.#x >> 17n);
  }
}

/** C's `(int)` of a number argument, as Lua 5.1's `luaL_checkint`. */
const checkInt = (L: State, arg: number): number =>
  Math.trunc(lauxlib.luaL_checknumber(L, arg)) | 0;

/** `math.random([m [, n]])` drawing from `random`. */
export function random(L: State, generator: Rand48): number {
  const r = (generator.next() % MAX) / MAX;
  const top = lua.lua_gettop(L);
  if (top === 0) lua.lua_pushnumber(L, r);
  else if (top === 1) {
    const u = checkInt(L, 1);
    lauxlib.luaL_argcheck(L, 1 <= u, 1, to_luastring("interval is empty"));
    lua.lua_pushnumber(L, Math.floor(r * u) + 1);
  } else if (top === 2) {
    const l = checkInt(L, 1);
    const u = checkInt(L, 2);
    lauxlib.luaL_argcheck(L, l <= u, 2, to_luastring("interval is empty"));
    lua.lua_pushnumber(L, Math.floor(r * (u - l + 1)) + l);
  } else {
    return lauxlib.luaL_error(L, to_luastring("wrong number of arguments"));
  }
  return 1;
}

/** `math.randomseed(n)`. */
export function randomseed(L: State, generator: Rand48): number {
  generator.seed(checkInt(L, 1));
  return 0;
}
