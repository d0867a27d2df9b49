/**
 * Lua source of every script edgelock runs. All durations are milliseconds (PX, PEXPIRE, PTTL).
 * Every script takes KEYS[1] = lock key and KEYS[2] = fence counter key, and returns integers only
 * (so no client-side deserialization or base64 decoding can alter a reply).
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
 * so no token starts with `done:`), pttl being the marker's remaining retention.
 */
export const ACQUIRE_LUA = `-- edgelock acquire
local current = redis.call("GET", KEYS[1])
if current == false then
  -- free: take it with our token and a TTL in ms
  redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
  local fence = 0
  if ARGV[3] == "1" then
    fence = redis.call("INCR", KEYS[2])
  end
  return {1, fence}
end
if string.sub(current, 1, 5) == "done:" then
  -- a once() job finished under this key: report how long the marker is kept
  return {2, redis.call("PTTL", KEYS[1])}
end
if current == ARGV[1] then
  -- already ours (a retried request): refresh the TTL, never count a second fence
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  local fence = 0
  if ARGV[3] == "1" then
    fence = tonumber(redis.call("GET", KEYS[2]) or "0")
  end
  return {1, fence}
end
-- held by someone else: report how long their grant still runs
return {0, redis.call("PTTL", KEYS[1])}
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
  -- expired: do not bring it back
  return 0
end
return -1
`;

/**
 * Release. ARGV[1] = token.
 * Returns 1 deleted, 0 expired/absent, -1 held by someone else (left alone).
 */
export const RELEASE_LUA = `-- edgelock release
local current = redis.call("GET", KEYS[1])
if current == ARGV[1] then
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
 * Inspect (read only). Returns {pttl, fence}: pttl -2 = absent, -1 = no expiry.
 */
export const INSPECT_LUA = `-- edgelock inspect
local pttl = redis.call("PTTL", KEYS[1])
local fence = tonumber(redis.call("GET", KEYS[2]) or "0")
return {pttl, fence}
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
  -- ours, or our grant expired after the job finished: record the job as done
  redis.call("SET", KEYS[1], "done:" .. ARGV[1], "PX", ARGV[2])
  return 1
end
if string.sub(current, 1, 5) == "done:" then
  -- already recorded
  return 2
end
-- someone else holds it now: leave it alone
return 0
`;

/**
 * Handover: release our grant and grant the key to the next waiter in one step. ARGV[1] = our
 * token, ARGV[2] = the next holder's token, ARGV[3] = its ttl ms, ARGV[4] = "1" to issue a fence.
 * Returns {grant, value, released}: grant and value as ACQUIRE ({1, fence} granted to the next
 * token, {0, pttl} held by another, {2, pttl} done marker); released 1 when our token was there
 * (or the request is a re-send that already handed over), 0 when the key was absent (our grant
 * had expired), -1 when someone else holds it (left alone).
 */
export const HANDOVER_LUA = `-- edgelock handover
local current = redis.call("GET", KEYS[1])
local released = 0
if current == ARGV[1] then
  released = 1
  current = false
end
if current == false then
  -- ours (now released) or free: the next holder takes it with a TTL in ms
  redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
  local fence = 0
  if ARGV[4] == "1" then
    fence = redis.call("INCR", KEYS[2])
  end
  return {1, fence, released}
end
if current == ARGV[2] then
  -- a re-sent request that already handed over: refresh the TTL, never count a second fence
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
-- someone else holds it: report how long their grant still runs, leave it alone
return {0, redis.call("PTTL", KEYS[1]), -1}
`;
