/**
 * Lua source of every script edgelock runs. All durations are milliseconds (PX, PEXPIRE, PTTL).
 * Every script takes KEYS[1] = lock key, KEYS[2] = fence counter key and KEYS[3] = wait room key
 * (the sorted set of waiters to wake on release, and the stem of their wake-up channels), and
 * returns integers only (so no client-side deserialization or base64 decoding can alter a reply).
 *
 * The SHA-1 of each source is a literal in `scripts.ts`; changing a byte here changes the hash,
 * which the unit test (WebCrypto) and the integration test (SCRIPT LOAD) catch.
 *
 * @module
 */

/**
 * Acquire. ARGV[1] = token, ARGV[2] = ttl ms, ARGV[3] = "1" to issue a fence.
 * Returns {1, fence} when granted (fence 0 without fencing), {0, pttl} when held by another,
 * {2, pttl} when the key holds a done marker (`done:<token>`, written by COMPLETE; tokens are hex,
 * so no token starts with `done:`), pttl being the marker's remaining retention. A retried
 * request that finds its own token refreshes the TTL and never counts a second fence.
 *
 * Wake-up registration (optional): ARGV[4] = the waiter (`<deadline epoch ms>:<listener>:<id>`),
 * ARGV[5] = its place (epoch ms of its first look), ARGV[6] = ms to keep the wait room. When
 * held by another, the waiter is added to the wait room KEYS[3] (a sorted set by place) that
 * RELEASE pops; when granted, it leaves the room. A KEYS[3] of another type (a user key) is left
 * alone. A key that RELEASE reserved for this waiter (`wake:<waiter>`) counts as free for it,
 * and as held for everyone else, reported as {3, pttl}: the reservation's PTTL is short, but the
 * woken waiter is about to take the key for a whole lease.
 */
export const ACQUIRE_LUA = `-- edgelock acquire
local current = redis.call("GET", KEYS[1])
local w = ARGV[4]
if w and current == "wake:" .. w then
  current = false
end
if current == false or current == ARGV[1] then
  if current == false then
    redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
  else
    redis.call("PEXPIRE", KEYS[1], ARGV[2])
  end
  if w and redis.call("TYPE", KEYS[3]).ok == "zset" then
    redis.call("ZREM", KEYS[3], w)
  end
  local f = 0
  if ARGV[3] == "1" then
    if current == false then
      f = redis.call("INCR", KEYS[2])
    else
      f = tonumber(redis.call("GET", KEYS[2]) or "0")
    end
  end
  return {1, f}
end
if string.sub(current, 1, 5) == "done:" then
  return {2, redis.call("PTTL", KEYS[1])}
end
local held = 0
if string.sub(current, 1, 5) == "wake:" then
  held = 3
end
if w then
  local t = redis.call("TYPE", KEYS[3]).ok
  if t == "zset" or t == "none" then
    redis.call("ZADD", KEYS[3], ARGV[5], w)
    if redis.call("PTTL", KEYS[3]) < tonumber(ARGV[6]) then
      redis.call("PEXPIRE", KEYS[3], ARGV[6])
    end
  end
end
return {held, redis.call("PTTL", KEYS[1])}
`;

/**
 * Extend. ARGV[1] = token, ARGV[2] = ttl ms.
 * Returns 1 extended, 0 expired/absent (never resurrected), -1 held by someone else.
 */
export const EXTEND_LUA = `-- edgelock extend
local current = redis.call("GET", KEYS[1])
if current == ARGV[1] then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return 1
end
if current == false then
  return 0
end
return -1
`;

/**
 * Release. ARGV[1] = token, ARGV[2] (optional) = the releaser's epoch ms, ARGV[3] = ms to keep
 * the key for a woken waiter. Returns 1 released, 0 expired/absent, -1 held by someone else (left
 * alone).
 *
 * With ARGV[2], a release hands the key to the first waiter of the wait room KEYS[3] (see
 * ACQUIRE): it pops waiters in order, drops those whose deadline ends within the reservation (at
 * most 8 per call; they stopped waiting or are about to, and still see the key free on a look),
 * and for the first live one sets the key to `wake:<waiter>` with PX ARGV[3] instead of deleting
 * it, then publishes the waiter on its listener's channel: a waiter is
 * `<deadline epoch ms>:<listener>:<id>`, the channel `<KEYS[3]>:<listener>`. The reservation keeps
 * newcomers from taking the key before the woken waiter's request arrives (they wait in the room
 * behind it), and expires soon if that waiter is gone. Without a live waiter the key is deleted.
 * A cleanup after a failed acquire sends no ARGV[2]: freeing a minority of nodes does not free
 * the lock.
 */
export const RELEASE_LUA = `-- edgelock release
local current = redis.call("GET", KEYS[1])
if current == ARGV[1] then
  if ARGV[2] and redis.call("TYPE", KEYS[3]).ok == "zset" then
    local soon = tonumber(ARGV[2]) + tonumber(ARGV[3])
    for i = 1, 8 do
      local head = redis.call("ZPOPMIN", KEYS[3])[1]
      if head == nil then break end
      if tonumber(string.match(head, "^%d+") or "0") > soon then
        redis.call("SET", KEYS[1], "wake:" .. head, "PX", ARGV[3])
        local listener = string.match(head, "^%d+:(%x+):")
        if listener then
          redis.call("PUBLISH", KEYS[3] .. ":" .. listener, head)
        end
        return 1
      end
    end
  end
  redis.call("DEL", KEYS[1])
  return 1
end
if current == false then
  return 0
end
return -1
`;

/**
 * Fence raise. ARGV[1] = fence. Raises the counter to at least ARGV[1] (a max, so it is
 * idempotent and never lowers a counter). Returns the counter afterwards.
 */
export const FENCE_RAISE_LUA = `-- edgelock fence raise
local target = tonumber(ARGV[1])
local counter = tonumber(redis.call("GET", KEYS[2]) or "0")
if counter < target then
  redis.call("SET", KEYS[2], ARGV[1])
  counter = target
end
return counter
`;

/**
 * Inspect (read only). Returns {pttl, fence, kind}: pttl -2 = absent, -1 = no expiry; kind 1 = a
 * done marker of `once()`, 2 = a release's reservation for a woken waiter, 0 = anything else (a
 * holder's token, or nothing).
 */
export const INSPECT_LUA = `-- edgelock inspect
local pttl = redis.call("PTTL", KEYS[1])
local fence = tonumber(redis.call("GET", KEYS[2]) or "0")
local kind = 0
if redis.call("TYPE", KEYS[1]).ok == "string" then
  local head = string.sub(redis.call("GET", KEYS[1]), 1, 5)
  if head == "done:" then
    kind = 1
  elseif head == "wake:" then
    kind = 2
  end
end
return {pttl, fence, kind}
`;

/**
 * Force release: delete the lock key whoever holds it (the fence counter stays).
 * Returns the number of keys deleted (0 or 1).
 */
export const FORCE_RELEASE_LUA = `-- edgelock force release
return redis.call("DEL", KEYS[1])
`;

/**
 * Complete (once()): turn our lock into a done marker. ARGV[1] = token, ARGV[2] = retention ms.
 * Uses KEYS[1] only. Returns 1 when it wrote `done:<token>` with `PX retention` (the key held our
 * token, or was absent: our grant expired but the job did finish), 2 when a done marker is
 * already there (a re-sent request, or another run recorded it), 0 when another holder has the
 * key now (left alone).
 */
export const COMPLETE_LUA = `-- edgelock complete
local current = redis.call("GET", KEYS[1])
if current == ARGV[1] or current == false then
  redis.call("SET", KEYS[1], "done:" .. ARGV[1], "PX", ARGV[2])
  return 1
end
if string.sub(current, 1, 5) == "done:" then
  return 2
end
return 0
`;

/**
 * Handover: release our grant and grant the key to the next waiter in one step. ARGV[1] = our
 * token, ARGV[2] = the next holder's token, ARGV[3] = its ttl ms, ARGV[4] = "1" to issue a fence.
 * Returns {grant, value, released}: grant and value as ACQUIRE ({1, fence} granted to the next
 * token, {0, pttl} held by another, {2, pttl} done marker); released 1 when our token was there
 * (or the request is a re-send that already handed over), 0 when the key was absent (our grant
 * had expired), -1 when someone else holds it (left alone). ARGV[5] (optional) = the next
 * holder's waiter entry, removed from the wait room KEYS[3] on the grant (see ACQUIRE).
 */
export const HANDOVER_LUA = `-- edgelock handover
local current = redis.call("GET", KEYS[1])
local released = 0
if current == ARGV[1] then
  released = 1
  current = false
end
if current == false then
  redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
  if ARGV[5] and redis.call("TYPE", KEYS[3]).ok == "zset" then
    redis.call("ZREM", KEYS[3], ARGV[5])
  end
  local fence = 0
  if ARGV[4] == "1" then
    fence = redis.call("INCR", KEYS[2])
  end
  return {1, fence, released}
end
if current == ARGV[2] then
  redis.call("PEXPIRE", KEYS[1], ARGV[3])
  local fence = 0
  if ARGV[4] == "1" then
    fence = tonumber(redis.call("GET", KEYS[2]) or "0")
  end
  return {1, fence, 1}
end
if string.sub(current, 1, 5) == "done:" then
  return {2, redis.call("PTTL", KEYS[1]), -1}
end
return {0, redis.call("PTTL", KEYS[1]), -1}
`;

/**
 * Leave the wait room: remove waiter ARGV[1] from KEYS[3] (see ACQUIRE), if KEYS[3] is a room.
 * Sent by a waiter that stopped waiting early, and after a grant to the nodes that refused it
 * (their last look registered it there). Returns the number removed (0 or 1).
 */
export const LEAVE_LUA = `-- edgelock leave
if redis.call("TYPE", KEYS[3]).ok == "zset" then
  return redis.call("ZREM", KEYS[3], ARGV[1])
end
return 0
`;
