/**
 * The commands of the in-memory dev node, as a REST caller sends them: each checked for its arity
 * as Redis checks it (`ERR wrong number of arguments for 'get' command`), run on the in-process
 * node (`SimNode`: a Redis 7 keyspace of strings, hashes and sorted sets with millisecond expiry,
 * edgelock's Lua scripts run in a Lua VM), and its reply converted to the endpoint's shapes
 * (`encode.ts`).
 *
 * Implemented: what edgelock's client and scripts send (`EVAL`, `EVALSHA` and their `_RO` forms,
 * `SCRIPT EXISTS`/`FLUSH`), what its CLI and the README's samples read (`GET`, `PTTL`, `TYPE`,
 * `ZRANGE`), and a few for trying things by hand: `PING`, `ECHO`, `SET` with `NX`/`XX`/`GET`/`EX`/
 * `PX`/`EXAT`/`PXAT`/`KEEPTTL`, `DEL`, `EXISTS`, `EXPIRE` and `PEXPIRE` (with `NX`/`XX`/`GT`/`LT`),
 * `TTL`, `INCR`, `HSET`, `HGET`, `HDEL`, `HLEN`, `HEXISTS`, `HGETALL`, `ZADD` (several members,
 * `NX`/`XX`/`GT`/`LT`/`CH`/`INCR`), `ZREM`, `ZCARD`, `ZSCORE`, `ZPOPMIN`, `PUBLISH`, `KEYS`,
 * `DBSIZE`, `FLUSHALL`, `FLUSHDB`, `TIME`. Any other command is answered as Redis answers an unknown
 * one, `ERR unknown command 'sadd', with args beginning with: …`, plus a note that the in-memory node
 * does not implement it: run the dev cluster on redis-server for those.
 *
 * @module
 */

import type { Reply, ScriptResult, SimNode } from "../memory";
import type { RedisReply } from "./encode";
import type { ParsedCommand } from "./request";

/** What a command runs against: the node, and the node's pub/sub for `PUBLISH`. */
export interface MemoryStore {
  readonly node: SimNode;
  /** Delivers a message; the number of subscriptions that received it. */
  publish(channel: string, message: string): number;
}

interface Spec {
  /** Redis's arity: the argument count with the name, exact when positive, at least −n when negative. */
  readonly arity: number;
  readonly run: (store: MemoryStore, args: string[]) => RedisReply;
}

const NOT_INTEGER = new Error("ERR value is not an integer or out of range");
const SYNTAX = new Error("ERR syntax error");

const integer = (text: string | undefined): number | undefined =>
  text !== undefined && /^-?\d+$/.test(text) && Number.isSafeInteger(Number(text))
    ? Number(text)
    : undefined;

/** A keyspace reply (RESP shapes) as the endpoint encodes it: bulk strings as bytes. */
export function fromReply(reply: Reply): RedisReply {
  if (reply === null || typeof reply === "number") return reply;
  if (typeof reply === "string") return Buffer.from(reply, "utf8");
  if (Array.isArray(reply)) return reply.map(fromReply);
  if ("err" in reply) return new Error(reply.err);
  return Buffer.from(reply.ok, "utf8");
}

function fromScript(result: ScriptResult): RedisReply {
  if (!result.ok) return new Error(result.error);
  const convert = (value: unknown): RedisReply => {
    if (value === null || value === undefined) return null;
    if (typeof value === "number") return value;
    if (typeof value === "string") return Buffer.from(value, "utf8");
    if (Array.isArray(value)) return value.map(convert);
    return Buffer.from(String(value), "utf8");
  };
  return convert(result.value);
}

const keyspace = (store: MemoryStore, argv: string[]): RedisReply =>
  fromReply(store.node.command(argv));

function script(store: MemoryStore, args: string[], bySha: boolean): RedisReply {
  const [body = "", count = "", ...rest] = args;
  const numkeys = integer(count);
  if (numkeys === undefined) return NOT_INTEGER;
  if (numkeys < 0) return new Error("ERR Number of keys can't be negative");
  if (numkeys > rest.length) {
    return new Error("ERR Number of keys can't be greater than number of args");
  }
  const keys = rest.slice(0, numkeys);
  const argv = rest.slice(numkeys);
  return fromScript(
    bySha ? store.node.evalsha(body.toLowerCase(), keys, argv) : store.node.eval(body, keys, argv),
  );
}

/** `SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]`, on the keyspace's `SET … PX`. */
function set(store: MemoryStore, [key = "", value = "", ...options]: string[]): RedisReply {
  const { node } = store;
  let condition: "NX" | "XX" | undefined;
  let get = false;
  let expiry: { readonly kind: string; readonly amount: number } | undefined;
  let keepTtl = false;
  for (let i = 0; i < options.length; i++) {
    const option = (options[i] as string).toUpperCase();
    if ((option === "NX" || option === "XX") && condition === undefined) condition = option;
    else if (option === "GET" && !get) get = true;
    else if (option === "KEEPTTL" && expiry === undefined && !keepTtl) keepTtl = true;
    else if (["EX", "PX", "EXAT", "PXAT"].includes(option) && expiry === undefined && !keepTtl) {
      const amount = integer(options[++i]);
      if (amount === undefined) return NOT_INTEGER;
      if (amount <= 0) return new Error("ERR invalid expire time in 'set' command");
      expiry = { kind: option, amount };
    } else return SYNTAX;
  }
  const type = node.type(key);
  if (get && type !== "string" && type !== "none") return keyspace(store, ["GET", key]);
  const old = get ? node.get(key) : null;
  const answer = (stored: boolean): RedisReply =>
    get ? (old === null ? null : Buffer.from(old, "utf8")) : stored ? Buffer.from("OK") : null;
  if ((condition === "NX" && type !== "none") || (condition === "XX" && type === "none")) {
    return answer(false);
  }
  const now = Date.now();
  let px: number | undefined;
  if (expiry?.kind === "EX") px = expiry.amount * 1000;
  else if (expiry?.kind === "PX") px = expiry.amount;
  else if (expiry?.kind === "EXAT") px = expiry.amount * 1000 - now;
  else if (expiry?.kind === "PXAT") px = expiry.amount - now;
  else if (keepTtl) {
    const left = node.pttl(key);
    if (left > 0) px = left;
  }
  if (px !== undefined && px <= 0) {
    // A deadline already past: Redis stores nothing and deletes the key.
    node.command(["DEL", key]);
    return answer(true);
  }
  node.command(px === undefined ? ["SET", key, value] : ["SET", key, value, "PX", String(px)]);
  return answer(true);
}

/** Redis's glob (`*`, `?`, `[…]`, `\x`) as a regular expression. */
export function globToRegExp(pattern: string): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "*") out += "[\\s\\S]*";
    else if (c === "?") out += "[\\s\\S]";
    else if (c === "\\" && i + 1 < pattern.length) out += `\\${pattern[++i]}`;
    else if (c === "[") {
      const close = pattern.indexOf("]", i + 2);
      if (close === -1) out += "\\[";
      else {
        const body = pattern.slice(i + 1, close).replace(/\\/g, "\\\\");
        out += body.startsWith("^") ? `[^${body.slice(1)}]` : `[${body}]`;
        i = close;
      }
    } else out += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

const flush = (store: MemoryStore, args: string[]): RedisReply => {
  if (args.length > 1 || (args[0] !== undefined && !/^(a?sync)$/i.test(args[0]))) return SYNTAX;
  const keys = store.node.keys();
  if (keys.length > 0) store.node.command(["DEL", ...keys]);
  return Buffer.from("OK");
};

const passThrough = (name: string, arity: number): [string, Spec] => [
  name,
  { arity, run: (store, args) => keyspace(store, [name.toUpperCase(), ...args]) },
];

const SPECS = new Map<string, Spec>([
  [
    "ping",
    {
      arity: -1,
      run: (_, args) =>
        args.length > 1
          ? new Error("ERR wrong number of arguments for 'ping' command")
          : Buffer.from(args[0] ?? "PONG", "utf8"),
    },
  ],
  ["echo", { arity: 2, run: (_, [message = ""]) => Buffer.from(message, "utf8") }],
  ["eval", { arity: -3, run: (store, args) => script(store, args, false) }],
  ["eval_ro", { arity: -3, run: (store, args) => script(store, args, false) }],
  ["evalsha", { arity: -3, run: (store, args) => script(store, args, true) }],
  ["evalsha_ro", { arity: -3, run: (store, args) => script(store, args, true) }],
  [
    "script",
    {
      arity: -2,
      run: (store, [sub = "", ...args]) => {
        const name = sub.toLowerCase();
        if (name === "exists")
          return args.map((sha) => (store.node.knows(sha.toLowerCase()) ? 1 : 0));
        if (name === "flush") {
          store.node.restart(true); // the script cache goes, the data stays
          return Buffer.from("OK");
        }
        return unknown({ name: `script|${name}`, lower: "script", args });
      },
    },
  ],
  ["set", { arity: -3, run: set }],
  passThrough("get", 2),
  passThrough("del", -2),
  passThrough("exists", -2),
  passThrough("pexpire", -3),
  passThrough("pttl", 2),
  passThrough("incr", 2),
  passThrough("type", 2),
  passThrough("hset", -4),
  passThrough("hget", 3),
  passThrough("hdel", -3),
  passThrough("hlen", 2),
  passThrough("hexists", 3),
  passThrough("hgetall", 2),
  passThrough("zadd", -4),
  passThrough("zrem", -3),
  passThrough("zcard", 2),
  passThrough("zscore", 3),
  passThrough("zpopmin", 2),
  passThrough("zrange", -4),
  [
    "expire",
    {
      arity: -3,
      run: (store, [key = "", seconds = "", ...flags]) => {
        const n = integer(seconds);
        const ms = String(n === undefined ? 0 : n * 1000);
        return n === undefined ? NOT_INTEGER : keyspace(store, ["PEXPIRE", key, ms, ...flags]);
      },
    },
  ],
  [
    "ttl",
    {
      arity: 2,
      run: (store, [key = ""]) => {
        const ms = store.node.pttl(key);
        return ms < 0 ? ms : Math.floor((ms + 500) / 1000);
      },
    },
  ],
  [
    "publish",
    { arity: 3, run: (store, [channel = "", message = ""]) => store.publish(channel, message) },
  ],
  [
    "keys",
    {
      arity: 2,
      run: (store, [pattern = "*"]) => {
        const match = globToRegExp(pattern);
        return store.node
          .keys()
          .filter((key) => match.test(key))
          .map((key) => Buffer.from(key, "utf8"));
      },
    },
  ],
  ["dbsize", { arity: 1, run: (store) => store.node.keys().length }],
  ["flushall", { arity: -1, run: flush }],
  ["flushdb", { arity: -1, run: flush }],
  // The node's own clock, as TIME inside a script reads it.
  passThrough("time", 1),
]);

/** Redis's reply to an unknown command, and why the in-memory node gives it. */
function unknown(command: ParsedCommand): Error {
  const args = command.args
    .slice(0, 16)
    .map((arg) => `'${arg.slice(0, 128)}' `)
    .join("");
  const name = command.name.includes("|")
    ? `subcommand '${command.name.split("|")[1]}' of '${command.lower}'`
    : `command '${command.name}'`;
  return new Error(
    `ERR unknown ${name}, with args beginning with: ${args}(not implemented by the in-memory dev node; start the dev cluster on redis-server for it: edgelock dev --redis)`,
  );
}

/**
 * What Redis would answer when queueing `command` in MULTI: an unknown command or a wrong arity
 * (the whole transaction is then discarded), or `undefined` when it can run.
 */
export function queueError(command: ParsedCommand): Error | undefined {
  const spec = SPECS.get(command.lower);
  if (spec === undefined) return unknown(command);
  const count = command.args.length + 1;
  if (spec.arity > 0 ? count !== spec.arity : count < -spec.arity) {
    return new Error(`ERR wrong number of arguments for '${command.lower}' command`);
  }
  return undefined;
}

/**
 * Runs one command on `store`; every failure is an `Error` reply, never a throw.
 *
 * @example
 * execute(store, { name: "GET", lower: "get", args: ["k"] }); // Buffer or null
 */
export function execute(store: MemoryStore, command: ParsedCommand): RedisReply {
  const error = queueError(command);
  if (error !== undefined) return error;
  return (SPECS.get(command.lower) as Spec).run(store, [...command.args]);
}
