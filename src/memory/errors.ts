/**
 * The errors a memory node throws. Both carry `name` `"UpstashError"`, the name `@upstash/redis`
 * gives a node's error reply, so that edgelock treats them exactly as it treats a real node's:
 * a `TransportError` of kind `"server"` naming the node, and NOSCRIPT answered by one EVAL.
 * Tell them apart with `instanceof`.
 *
 * @module
 */

/**
 * An error reply of a memory node, with Redis's text (`NOSCRIPT No matching script. Please use
 * EVAL.`, `ERR user_script:1: … script: <sha>, on @user_script:1.`, `WRONGTYPE …`).
 *
 * @example
 * await node.evalsha(sha, [], []).catch((e) => e instanceof MemoryNodeError); // true (NOSCRIPT)
 */
export class MemoryNodeError extends Error {
  override name = "UpstashError";
}

/**
 * A command a memory node does not implement, called by a script (`redis.call("SADD", …)`) or
 * directly (`node.command(["SADD", …])`). A memory node runs the commands edgelock's scripts
 * call: GET, SET (PX), DEL, EXISTS, INCR, PEXPIRE (NX/XX/GT/LT), PTTL, TYPE, PUBLISH, TIME, HSET,
 * HGET, HDEL, HLEN, HEXISTS, HGETALL and ZADD, ZREM, ZCARD, ZSCORE, ZPOPMIN, ZRANGE (WITHSCORES).
 * `command` names the one it does not (upper case).
 * Also what a script reaches in Redis 7's Lua that a memory node does not model, its message
 * saying `memory nodes do not model '<name>'`: `redis.sha1hex` on a platform without a synchronous
 * SHA-1 (every memory node of `edgelock/testing`; the dev cluster's memory nodes have one),
 * `redis.setresp(3)`, the `bit`, `struct` and `cmsgpack` libraries, `gcinfo`, and `redis.*` /
 * `cjson.*` fields such as `redis.set_repl` or `cjson.encode_max_depth`.
 *
 * @example
 * try { node.command(["SADD", "s", "m"]); } catch (e) { e.command; } // "SADD"
 * await node.eval('return redis.sha1hex("a")', [], []).catch((e) => e.command); // "redis.sha1hex"
 */
export class UnsupportedCommandError extends MemoryNodeError {
  /** The command's name, upper case (`"SADD"`), or the Lua name not modelled (`"redis.sha1hex"`). */
  readonly command: string;

  constructor(command: string, message: string) {
    super(message);
    this.command = command;
  }
}
