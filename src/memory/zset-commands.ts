/**
 * The sorted set commands of a memory node's keyspace, as Redis 7.0 runs them: ZADD (with the
 * options of `command-options.ts`), ZREM, ZCARD, ZSCORE, ZPOPMIN and ZRANGE (by index, WITHSCORES).
 * The keyspace owns the key (its type, its expiry, deleting it once emptied); this file only reads
 * and changes a set's members.
 *
 * @module
 */

import {
  formatScore,
  int64,
  NOT_INTEGER,
  parseScore,
  parseZadd,
  type Reply,
  SYNTAX,
  type TypedKey,
} from "./command-options";

/** A sorted set's members and their scores. */
export type Members = Map<string, number>;

/** The sorted set commands a memory node runs (upper case). */
export const ZSET_COMMANDS: ReadonlySet<string> = new Set([
  "ZADD",
  "ZREM",
  "ZCARD",
  "ZSCORE",
  "ZPOPMIN",
  "ZRANGE",
]);

/**
 * Members in Redis order: by score, then by member (bytewise; JavaScript's code-unit order is
 * the same for the texts edgelock writes).
 *
 * @example
 * sortedMembers(new Map([["b", 1], ["a", 1]])); // [["a", 1], ["b", 1]]
 */
export const sortedMembers = (members: Members): Array<[string, number]> =>
  [...members].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

const int = (text: string | undefined): number | undefined => {
  const value = int64(text ?? "");
  return value === undefined ? undefined : Number(value);
};

/** ZADD key [NX | XX] [GT | LT] [CH] [INCR] score member …, as Redis 7.0 runs it. */
function zadd(rest: readonly string[], key: TypedKey<Members>): Reply {
  // ZADD reads its options and scores before it looks at the key's type.
  const options = parseZadd(rest, parseScore);
  if ("err" in options) return options;
  const members = key.read();
  if (members !== undefined && !(members instanceof Map)) return members;
  if (members === undefined && options.xx) return options.incr ? null : 0;
  const set = members ?? new Map<string, number>();
  let added = 0;
  let updated = 0;
  let processed = 0;
  let last = 0;
  for (const [given, member] of options.pairs) {
    const current = set.get(member);
    if (current === undefined) {
      if (options.xx) continue;
      set.set(member, given);
      added++;
      processed++;
      last = given;
      continue;
    }
    if (options.nx) continue;
    const score = options.incr ? current + given : given;
    if (Number.isNaN(score)) return { err: "ERR resulting score is not a number (NaN)" };
    if ((options.lt && score >= current) || (options.gt && score <= current)) continue;
    processed++;
    last = score;
    if (score !== current) {
      set.set(member, score);
      updated++;
    }
  }
  if (members === undefined) key.write(set);
  if (options.incr) return processed > 0 ? formatScore(last) : null;
  return options.ch ? added + updated : added;
}

/**
 * Runs the sorted set command `name` (one of {@link ZSET_COMMANDS}, upper case) with the arguments
 * after its key.
 *
 * @example
 * zsetCommand("ZADD", ["1", "a"], key); // 1 (members added)
 * zsetCommand("ZSCORE", ["a"], key); // "1"
 */
export function zsetCommand(name: string, rest: readonly string[], key: TypedKey<Members>): Reply {
  if (name === "ZADD") return zadd(rest, key);
  const members = key.read();
  if (members !== undefined && !(members instanceof Map)) return members;
  switch (name) {
    case "ZREM": {
      if (members === undefined) return 0;
      const removed = rest.filter((m) => members.delete(m)).length;
      if (removed > 0) key.write(members);
      return removed;
    }
    case "ZCARD":
      return members?.size ?? 0;
    case "ZSCORE": {
      const score = members?.get(rest[0] ?? "");
      return score === undefined ? null : formatScore(score);
    }
    case "ZPOPMIN": {
      const [first] = members === undefined ? [] : sortedMembers(members);
      if (first === undefined || members === undefined) return [];
      members.delete(first[0]);
      key.write(members);
      return [first[0], formatScore(first[1])];
    }
    case "ZRANGE": {
      // Redis reads the options first (a syntax error), then the bounds.
      const withScores = rest[2]?.toUpperCase() === "WITHSCORES";
      if (rest.length > (withScores ? 3 : 2)) return SYNTAX;
      const [start, stop] = [int(rest[0]), int(rest[1])];
      if (start === undefined || stop === undefined) return NOT_INTEGER;
      const all = members === undefined ? [] : sortedMembers(members);
      const from = start < 0 ? Math.max(0, all.length + start) : start;
      const to = stop < 0 ? all.length + stop : Math.min(stop, all.length - 1);
      const picked = all.slice(from, to + 1);
      return picked.flatMap(([m, s]) => (withScores ? [m, formatScore(s)] : [m]));
    }
    default:
      throw new Error(`unreachable: ${name}`);
  }
}
