/**
 * Lua source of every script edgelock runs. All durations are milliseconds (PX, PEXPIRE, PTTL).
 * Every script names its keys and arguments in locals at its top; the TypeScript side builds the
 * same arguments in one place per script (`args` in `scripts.ts`).
 *
 * Every script takes its keys in triples (`KEY_TRIPLES`: `lockKey(i)`, `fenceKey(i)`,
 * `roomKey(i)`): a lock key, its fence counter key and its wait room key (the sorted set of
 * waiters to wake on release, and the stem of their wake-up channels). A lock on one key passes
 * one triple; a lock on several keys passes one triple per key, sorted, and ACQUIRE, EXTEND,
 * RESUME, RELEASE, HANDOVER, FENCE_RAISE and LEAVE act on all of them in one atomic step per node:
 * a node grants every key of the set or none. COMPLETE, RECORD, INSPECT and FORCE_RELEASE read
 * the first triple only (once(), idempotency and the operator commands take one key). Scripts
 * return integers only (so no client-side deserialization or base64 decoding can alter a reply),
 * except RECORD.
 *
 * (A caller that passes only a lock key and its fence key, as some tests do, is one triple whose
 * room is never touched unless the script needs it.) ACQUIRE, HANDOVER, RESUME and DISCARD take
 * one key more after the triples: the tombstone of the token they place or discard (`TRIPLES`).
 *
 * With several keys a node's keys of one lock are always set, extended and deleted together, so
 * they hold the same token with the same expiry. A mix (one key of the set deleted by
 * `forceRelease`, say) is answered conservatively: with another caller's value on a key, nothing
 * is granted, extended or resumed; our token beside an absent key is never extended, and a
 * re-sent ACQUIRE places the rest (drawing a new, higher fence).
 *
 * This file is the readable source; what ships is `shipped.ts`, generated from it by
 * `scripts/ship-lua.ts` (`npm run build`): each script minus its comments and whitespace (the same
 * Lua tokens), with the SHA-1 of that text. After a change here, run `npx tsx scripts/ship-lua.ts`;
 * `test/scripts/shipped.test.ts` fails while `shipped.ts` is out of date.
 *
 * @module
 */

/**
 * Lua shared by every script that takes key triples: `lockKey(i)`, `fenceKey(i)` and `roomKey(i)`
 * are the keys of triple i (1-based), `keyCount()` the number of triples when no tombstone key
 * follows them (a lock key and its fence key alone count as one).
 */
const KEY_TRIPLES = `-- KEYS: per lock key (sorted), the key, its fence counter and its wait room.
local function lockKey(i)
  return KEYS[3 * i - 2]
end
local function fenceKey(i)
  return KEYS[3 * i - 1]
end
local function roomKey(i)
  return KEYS[3 * i]
end
local function keyCount()
  return math.ceil(#KEYS / 3)
end
`;

/**
 * Lua shared by the scripts that keep a token where it is: `lengthen(key, ttl)` raises the key's
 * expiry to `ttl` ms when less is left, and never lowers it (docs/SAFETY.md §2, E1: a request that
 * timed out may still run, late or after a longer extension).
 */
const LENGTHEN = `local function lengthen(key, ttl)
  -- Never lower an expiry: a request that timed out may run after a longer extension.
  local left = redis.call("PTTL", key)
  if left >= 0 and left < tonumber(ttl) then
    redis.call("PEXPIRE", key, ttl)
  end
end
`;

/**
 * Lua shared by the scripts that issue fences: `counters()` is the highest fence counter of the
 * lock's keys, `issue()` sets every counter to that plus one and returns it (for one key: INCR).
 * A fence of a lock on several keys is thus above every fence issued before on any of its keys
 * on this node (docs/SAFETY.md §4b, M4). Needs `TRIPLES` before it (a tombstone key is no triple).
 */
const FENCES = `local function counters()
  local top = 0
  for i = 1, (triples()) do
    local c = tonumber(redis.call("GET", fenceKey(i)) or "0")
    if c > top then
      top = c
    end
  end
  return top
end
local function issue()
  -- One fence above every counter of the set, stored on all of them.
  local f = counters() + 1
  for i = 1, (triples()) do
    redis.call("SET", fenceKey(i), f)
  end
  return f
end
`;

/**
 * Lua shared by the scripts that place a token (ACQUIRE, HANDOVER, RESUME) and by DISCARD:
 * `triples()` is the number of key triples and the tombstone key passed after them, if any (one
 * key more than the triples: `<first lock key>:void:<token>`, see `DISCARD_LUA`). A tombstone
 * means the token's round failed and was cleaned up: a request of that round that runs later (it
 * timed out, or was re-sent) must place nothing (docs/SAFETY.md §2, L3).
 */
const TRIPLES = `local function triples()
  local n = keyCount()
  if #KEYS > 3 and #KEYS % 3 == 1 then
    return n - 1, KEYS[#KEYS]
  end
  return n, nil
end
local function discarded(void)
  return void ~= nil and redis.call("EXISTS", void) == 1
end
`;

/**
 * Lua shared by the scripts that end a one-shot key's run (COMPLETE, and RELEASE when given a
 * counter lifetime): `outlive(counter, ms)` makes the fence counter expire no earlier than `ms`
 * from now, and never later than it would anyway (a counter without expiry gets one). A one-shot
 * key's counter then lives as long as its done marker, and no counter of ours lives forever once
 * its run ended there (docs/SAFETY.md §5, one-shot keys).
 */
const OUTLIVE = `local function outlive(counter, ms)
  local left = redis.call("PTTL", counter)
  if left == -1 or (left >= 0 and left < tonumber(ms)) then
    redis.call("PEXPIRE", counter, ms)
  end
end
`;

/**
 * Acquire `token` for `ttl` ms, with `fencing` "1" issuing a fence.
 * Returns {1, fence} when granted (fence 0 without fencing), {0, pttl} when held by another,
 * {2, pttl} when the key holds a done marker (`done:<token>`, written by COMPLETE; tokens are hex,
 * so no token starts with `done:`), pttl being the marker's remaining retention. A retried
 * request that finds its own token never shortens the TTL and never counts a second fence.
 *
 * Wait room registration (sent by every caller waiting for one key): `waiter` =
 * `<deadline epoch ms>:<listener>:<id>` (listener = the hex id of its instance's wake-up channel,
 * or `p<ms>` for a poller: its longest sleep plus a look), `place` = epoch ms of its call, `roomMs`
 * = ms to keep the wait room. When held by another, the waiter is added to every key's wait room
 * (a sorted set by place) that RELEASE and HANDOVER serve; when granted, it leaves them. A room
 * key of another type (a user key) is left alone. A key that a release reserved for this waiter
 * (`wake:<waiter>|<releaser's token>`) counts as free for it, and as held for everyone else,
 * reported as {3, pttl}: the reservation's PTTL is short, but the waiter is about to take the key
 * for a whole lease.
 *
 * Several keys: granted only when every key is free (or ours, or reserved for this waiter); then
 * all are set, and the fence is one above the highest counter of the set (see `FENCES`). Refused
 * otherwise, nothing set: {2, pttl} when a key holds a done marker (no registration), else {0,
 * pttl} when a key holds a token, {3, pttl} when only reservations for others are in the way; the
 * pttl is the longest among the keys in the way (-1, no expiry, counts as the longest).
 *
 * After the triples, the token's tombstone key (see `TRIPLES`): when it exists, the round of this
 * token failed and was cleaned up (DISCARD), so nothing is placed and {0, pttl of the tombstone}
 * is returned (only a request of a dead round, late or re-sent, ever gets this answer).
 */
export const ACQUIRE_LUA = `-- edgelock acquire
${KEY_TRIPLES}${LENGTHEN}${TRIPLES}${FENCES}local n, void = triples() -- the lock's keys; the token's tombstone
local token = ARGV[1] -- the token to place
local ttl = ARGV[2] -- its lease, ms
local fencing = ARGV[3] == "1" -- issue a fence on a grant
local waiter = ARGV[4] -- the waiter to register while held (nil: none)
local place = ARGV[5] -- its place in the rooms: epoch ms of its call
local roomMs = ARGV[6] -- keep each room at least this long, ms

-- A late or re-sent request of a round that failed and was cleaned up places nothing.
if discarded(void) then
  return {0, redis.call("PTTL", void)}
end
local currents = {}
local fresh = false
local flag, wait = nil, -2
for i = 1, n do
  local current = redis.call("GET", lockKey(i))
  -- A reservation for this waiter is free for it alone.
  if waiter and current and string.sub(current, 1, #waiter + 6) == "wake:" .. waiter .. "|" then
    current = false
  end
  currents[i] = current
  if current == false then
    fresh = true
  elseif current ~= token then
    local pttl = redis.call("PTTL", lockKey(i))
    if string.sub(current, 1, 5) == "done:" then
      return {2, pttl}
    end
    if flag ~= 0 then
      flag = string.sub(current, 1, 5) == "wake:" and 3 or 0
    end
    -- Report the longest wait among the keys in the way (-1, no expiry, is the longest).
    if wait ~= -1 and (pttl == -1 or pttl > wait) then
      wait = pttl
    end
  end
end
if flag == nil then
  -- Every key is free or ours: all or none.
  for i = 1, n do
    if currents[i] == false then
      redis.call("SET", lockKey(i), token, "PX", ttl)
    else
      lengthen(lockKey(i), ttl)
    end
    if waiter and redis.call("TYPE", roomKey(i)).ok == "zset" then
      redis.call("ZREM", roomKey(i), waiter)
    end
  end
  local f = 0
  if fencing then
    -- A re-send that finds its token on every key draws no second fence.
    if fresh then
      f = issue()
    else
      f = counters()
    end
  end
  return {1, f}
end
if waiter then
  for i = 1, n do
    local room = roomKey(i)
    local t = redis.call("TYPE", room).ok
    -- Never touch a user's key of another type that happens to have a room's name.
    if t == "zset" or t == "none" then
      redis.call("ZADD", room, place, waiter)
      if redis.call("PTTL", room) < tonumber(roomMs) then
        redis.call("PEXPIRE", room, roomMs)
      end
    end
  end
end
return {flag, wait}
`;

/**
 * Lua shared by RELEASE and HANDOVER: serve a key's wait room (see ACQUIRE) on a release.
 * `serve(room, now, listenMs, before)` scans the first 8 waiters by place and returns the one to
 * reserve the key for, with the reservation's ms and its channel (nil for a poller):
 * - a waiter whose deadline ends within `listenMs` stopped waiting or is about to: removed;
 * - with `before` (the place of a waiter of the releaser's own instance, who would otherwise get
 *   the key next), the scan stops at the first place not earlier than it: that local waiter came
 *   first; a poller placed earlier (`<deadline>:p<ms>:<id>`) is served, for its own `<ms>` (its
 *   longest sleep plus a look) or until its deadline;
 * - without `before`, pollers are skipped (they find the key free on their next look, like
 *   anyone), and the first listener is served for `listenMs`.
 * `reserve(i, member, ms, listener, releaser)` takes the waiter out of key i's room, sets key i to
 * `wake:<member>|<releaser's token>` (free for that waiter only; the releaser's token lets a
 * re-sent release recognise its own reservation) and publishes the member on the listener's
 * channel. With several keys each key's room is served on its own. (The client registers no
 * waiter for several keys: a reservation of one of its keys while another is held would keep that
 * key idle.)
 */
const SERVE_ROOM = `local function serve(room, now, listenMs, before)
  local heads = redis.call("ZRANGE", room, 0, 7, "WITHSCORES")
  for i = 1, #heads, 2 do
    local member = heads[i]
    if before and tonumber(heads[i + 1]) >= before then
      return nil
    end
    local deadline = tonumber(string.match(member, "^(%d+):") or "0")
    local listener = string.match(member, "^%d+:([^:]+):") or ""
    local poll = tonumber(string.match(listener, "^p(%d+)$") or "")
    if deadline <= now + listenMs then
      redis.call("ZREM", room, member)
    elseif poll == nil then
      return member, listenMs, listener
    elseif before then
      return member, math.min(poll, deadline - now), nil
    end
  end
  return nil
end
local function reserve(i, member, ms, listener, releaser)
  local room = roomKey(i)
  redis.call("ZREM", room, member)
  -- The releaser's token in the value lets its re-sent request recognise the reservation.
  redis.call("SET", lockKey(i), "wake:" .. member .. "|" .. releaser, "PX", ms)
  if listener then
    redis.call("PUBLISH", room .. ":" .. listener, member)
  end
end
local function isRoom(i)
  return redis.call("TYPE", roomKey(i)).ok == "zset"
end
local function reservedBy(value, token)
  return string.sub(value, 1, 5) == "wake:" and string.sub(value, -#token - 1) == "|" .. token
end
`;

/**
 * Extend `token`'s keys to `ttl` ms.
 * Returns 1 extended (or already lasting at least ttl), 0 expired/absent (never resurrected), -1
 * held by someone else (several keys: 1 only when every key holds the token, then all are
 * extended; -1 when any key holds something else; 0 otherwise). Never shortens an expiry: a
 * request that timed out may still run (late, or after a shorter extension), and the holder's
 * validity relies on no node dropping the token earlier than any expiry it was granted
 * (docs/SAFETY.md §2, E1; §3, E3).
 */
export const EXTEND_LUA = `-- edgelock extend
${KEY_TRIPLES}${LENGTHEN}local n = keyCount() -- the lock's keys
local token = ARGV[1] -- the holder's token
local ttl = ARGV[2] -- the lease to extend to, ms

local absent = false
for i = 1, n do
  local current = redis.call("GET", lockKey(i))
  if current == false then
    absent = true
  elseif current ~= token then
    return -1
  end
end
-- Never resurrect: an absent key may have been granted to someone since.
if absent then
  return 0
end
for i = 1, n do
  lengthen(lockKey(i), ttl)
end
return 1
`;

/**
 * Resume (a ticket taken to another invocation): swap the ticket's token `ticket` for `fresh`,
 * for at least `ttl` ms, with `fencing` "1" issuing a fence.
 * Returns {1, fence} resumed: the key now holds the fresh token, expiring no earlier than before
 * nor than ttl from now, and with fencing the fence counter was incremented (0 otherwise; a
 * re-send that finds the fresh token reports the counter as it is); {0, 0} absent (never
 * resurrected); {-1, 0} held by anything else — another resume of the same ticket rotated it
 * first, or another holder. Rotating the token makes a ticket single-use: of two resumes of one
 * ticket (a message delivered twice) at most one rotates it on a majority (docs/SAFETY.md §4,
 * Theorem 3); the fresh fence orders the resumed lock after the sender, as a new grant. Several
 * keys: resumed only when every key holds the ticket's token; {-1, 0} when any key holds anything
 * but the two tokens or nothing; {0, 0} otherwise.
 *
 * After the triples, the ticket's record of failed resumes, `<first lock key>:void:<ticket's
 * token>` (see `TRIPLES`, `DISCARD_LUA`): the fresh tokens of this ticket's failed resumes whose
 * undo ran here, each followed by a comma. When it lists `fresh`, this resume failed and was
 * undone here, so a RESUME of it that runs now (late, or re-sent) swaps nothing and returns
 * {-1, 0, 1}: the ticket stays resumable. Every reply has a third element, 1 when the record
 * exists here (a resume of this ticket failed: a node that holds "anything else" may hold that
 * resume's token until its undo lands there, so the client does not call the ticket lost), else 0.
 */
export const RESUME_LUA = `-- edgelock resume
${KEY_TRIPLES}${TRIPLES}${FENCES}local n, void = triples() -- the lock's keys; the ticket's record of failed resumes
local ticket = ARGV[1] -- the ticket's token
local fresh = ARGV[2] -- the fresh token that replaces it
local ttl = ARGV[3] -- the lease, ms (never shortens the ticket's)
local fencing = ARGV[4] == "1" -- issue a fence on a swap

local undone = 0
if void and redis.call("TYPE", void).ok == "string" then
  undone = 1
  -- This resume failed and was undone here: a late or re-sent request swaps nothing.
  if string.find(redis.call("GET", void), fresh .. ",", 1, true) then
    return {-1, 0, 1}
  end
end
local onTicket, onFresh = 0, 0
for i = 1, n do
  local current = redis.call("GET", lockKey(i))
  if current == ticket then
    onTicket = onTicket + 1
  elseif current == fresh then
    onFresh = onFresh + 1
  elseif current ~= false then
    return {-1, 0, undone}
  end
end
if onTicket == n then
  for i = 1, n do
    local keep = tonumber(ttl)
    local left = redis.call("PTTL", lockKey(i))
    if left > keep then
      keep = left
    end
    -- A new token, not an extension: the ticket is single-use.
    redis.call("SET", lockKey(i), fresh, "PX", keep)
  end
  local fence = 0
  if fencing then
    fence = issue()
  end
  return {1, fence, undone}
end
-- A re-send that finds its own swap reports it, with the fence as it is.
if onFresh == n then
  return {1, counters(), undone}
end
return {0, 0, undone}
`;

/**
 * Release `token`; to serve the wait room (see `SERVE_ROOM`): `now` = the releaser's epoch ms,
 * `listenMs` = ms to keep the key for a woken listener, `before` (optional) = the place of the
 * releaser's own next waiter ("" for none), `counterMs` (optional) = a one-shot run's counter
 * lifetime in ms: where the key held our token or is absent, its fence counter is made to live at
 * least that long and no longer than it would (`outlive`; a failed run of `once()` or of an
 * idempotent request, whose retry continues the count within it). Returns 1 released, 0
 * expired/absent, -1 held by someone else (left alone). Several keys: every key holding the token
 * is released; 1 when any did (or holds our reservation), 0 when all are absent, -1 otherwise.
 *
 * With `now`, the key goes to the waiter `serve` picks, as a reservation, instead of being
 * deleted; that waiter's ACQUIRE takes it, newcomers wait behind it, and it expires soon if the
 * waiter is gone. A re-sent release that finds its own reservation reports 1. A cleanup after a
 * failed round sends no `now` (and is a DISCARD today): freeing a minority of nodes does not free
 * the lock.
 */
export const RELEASE_LUA = `-- edgelock release
${KEY_TRIPLES}${SERVE_ROOM}${OUTLIVE}local n = keyCount() -- the lock's keys
local token = ARGV[1] -- the releaser's token
local now = ARGV[2] -- serve the rooms: the releaser's epoch ms (nil: serve none)
local listenMs = ARGV[3] -- keep a key this long for a woken listener, ms
local before = ARGV[4] -- the place of the releaser's own next waiter ("" or nil: none)
local counterMs = ARGV[5] -- a one-shot run's counter lifetime, ms (nil: a plain lock)

local released, gone = 0, 0
for i = 1, n do
  local current = redis.call("GET", lockKey(i))
  if counterMs and (current == token or current == false) then
    outlive(fenceKey(i), counterMs)
  end
  if current == token then
    released = 1
    local member, ms, listener
    if now and isRoom(i) then
      local ahead = before and tonumber(before)
      member, ms, listener = serve(roomKey(i), tonumber(now), tonumber(listenMs), ahead)
    end
    if member then
      reserve(i, member, ms, listener, token)
    else
      redis.call("DEL", lockKey(i))
    end
  elseif current == false then
    gone = gone + 1
  elseif reservedBy(current, token) then
    -- A re-send: the first request already handed the key to a waiter.
    released = 1
  end
end
if released == 1 then
  return 1
end
if gone == n then
  return 0
end
return -1
`;

/**
 * Fence raise: raise the counters to at least `fence`, for `token`'s grant. A max, so it is
 * idempotent and never lowers a counter. Returns {1, counter} when the lock key holds our token,
 * or is absent beside a counter without expiry (or none); {0, counter} otherwise: where the key
 * holds anything else another holder may already have taken its INCR below our fence, so this
 * raise does not order it after us and must not count towards the raise's majority
 * (docs/SAFETY.md §5, F2). Where the key holds our token the counter keeps no expiry (a one-shot
 * key's counter may have one from an earlier run's end: from this grant on it lives until this
 * run's own end gives it one again). An absent key beside an expiring counter is a one-shot key
 * whose run ended there (possibly this raise's own run, the raise running late): the raise does
 * not count, and like every raise that does not count it keeps the counter's expiry, so no late
 * raise leaves a counter for ever; a counter it creates beside a done marker expires with the
 * marker (a late raise of the run that wrote it). Several keys: every counter is raised, the
 * reply's counter is the highest, and the raise counts only when every lock key holds our token
 * or is absent.
 */
export const FENCE_RAISE_LUA = `-- edgelock fence raise
${KEY_TRIPLES}local fence = ARGV[1] -- the fence every counter must reach
local token = ARGV[2] -- our token: the raise counts only where the key holds it (or is absent)

local target = tonumber(fence)
local counts = 1
local top = 0
for i = 1, keyCount() do
  local counter = tonumber(redis.call("GET", fenceKey(i)) or "0")
  local current = redis.call("GET", lockKey(i))
  local left = redis.call("PTTL", fenceKey(i))
  -- An absent key beside an expiring counter is a one-shot run that ended: not ours to count.
  local mine = current == token or (current == false and left < 0)
  if counter < target then
    redis.call("SET", fenceKey(i), fence)
    counter = target
    if not mine and left == -2 and string.sub(current, 1, 5) == "done:" then
      left = redis.call("PTTL", lockKey(i))
    end
    if left >= 0 and not mine then
      redis.call("PEXPIRE", fenceKey(i), math.max(math.floor(left), 1))
    end
  elseif mine and left >= 0 then
    -- Our grant: the counter lives until this run's own end gives it an expiry again.
    redis.call("SET", fenceKey(i), tostring(counter))
  end
  if counter > top then
    top = counter
  end
  if not mine then
    counts = 0
  end
end
return {counts, top}
`;

/**
 * Inspect (read only). Returns {pttl, fence, kind}: pttl -2 = absent, -1 = no expiry; kind 1 = a
 * done marker of `once()`, 2 = a release's reservation for a woken waiter, 0 = anything else (a
 * holder's token, or nothing).
 */
export const INSPECT_LUA = `-- edgelock inspect
local key = KEYS[1] -- the lock key
local counter = KEYS[2] -- its fence counter

local pttl = redis.call("PTTL", key)
local fence = tonumber(redis.call("GET", counter) or "0")
local kind = 0
if redis.call("TYPE", key).ok == "string" then
  local head = string.sub(redis.call("GET", key), 1, 5)
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
local key = KEYS[1] -- the lock key; its fence counter stays, so fences keep rising

return redis.call("DEL", key)
`;

/**
 * Complete (once(), idempotency): turn our lock into a done marker. `token` = ours, `retention`
 * = ms to keep the marker, `record` (optional) = a record to keep in the marker (the idempotency
 * layer's stored response: printable ASCII). Uses the first triple only. Returns 1 when it wrote
 * `done:<token>` (or `done:<token>|<record>`) with `PX retention` (the key held our token, or was
 * absent: our grant expired but the job did finish), 2 when a done marker is already there (a
 * re-sent request, or another run recorded it: the first record stays), 0 when another holder has
 * the key now (left alone). With a marker in place (1 or 2) the fence counter (when given) is made
 * to live at least `retention` more (`outlive`): while the marker stands no token is placed and
 * no fence issued there, and once both are gone a later run starts a new count.
 */
export const COMPLETE_LUA = `-- edgelock complete
${OUTLIVE}local key = KEYS[1] -- the lock key
local counter = KEYS[2] -- its fence counter (nil: not given)
local token = ARGV[1] -- our token
local retention = ARGV[2] -- how long the marker stays, ms
local record = ARGV[3] -- kept in the marker (nil: none)

local current = redis.call("GET", key)
-- Absent too: our grant expired, but the job did finish.
if current == token or current == false then
  local marker = "done:" .. token
  if record then
    marker = marker .. "|" .. record
  end
  redis.call("SET", key, marker, "PX", retention)
  if counter then
    outlive(counter, retention)
  end
  return 1
end
-- A marker stays as it is: the first record wins.
if string.sub(current, 1, 5) == "done:" then
  if counter then
    outlive(counter, retention)
  end
  return 2
end
return 0
`;

/**
 * Record (read only): what the key holds, for the idempotency layer. Returns {0, -2, ""} absent,
 * {1, pttl, ""} held (a holder's token or a reservation), {2, pttl, record} a done marker with the
 * record COMPLETE kept in it ("" for a marker without one). The one script whose reply carries a
 * string: the record is printable ASCII written by our own COMPLETE, and must reach the parser
 * undecoded (`JSON.parse` would alter `123` or `"x"`): both node forms skip the client's reply
 * deserialization (see `createNode`).
 */
export const RECORD_LUA = `-- edgelock record
local key = KEYS[1] -- the lock key

if redis.call("TYPE", key).ok ~= "string" then
  return {0, -2, ""}
end
local current = redis.call("GET", key)
local pttl = redis.call("PTTL", key)
if string.sub(current, 1, 5) ~= "done:" then
  return {1, pttl, ""}
end
local bar = string.find(current, "|", 6, true)
if bar then
  return {2, pttl, string.sub(current, bar + 1)}
end
return {2, pttl, ""}
`;

/**
 * Handover: release our grant (`token`) and grant the key to the next waiter in one step: its
 * token `nextToken` for `ttl` ms, with `fencing` "1" issuing a fence; `member` = its waiter entry
 * ("" for none; removed from the wait room on the grant), `now` = our epoch ms, `listenMs` = ms
 * to keep the key for a woken listener, `place` = its place ("" for none).
 * Returns {grant, value, released}: grant and value as ACQUIRE ({1, fence} granted to the next
 * token, {0, pttl} held by another, {2, pttl} done marker, {3, pttl} reserved for a waiter);
 * released 1 when our token was there (or the request is a re-send that already handed over),
 * 0 when the key was absent (our grant had expired), -1 when someone else holds it (left alone).
 *
 * A waiter of the room placed before the next holder (another instance's, see `SERVE_ROOM`)
 * goes first: the key is reserved for it and the reply is {3, ms, released}.
 *
 * Several keys: handed over only when every key is free, ours or already the next holder's (a
 * re-send); the fence as ACQUIRE's. When any key's room has a waiter placed before the next
 * holder, no key is handed over: the keys with such a waiter are reserved for it, our other keys
 * deleted, and the reply is {3, ms, released}. A key in the way (someone else's) refuses as for one
 * key, leaving every key alone.
 *
 * After the triples, the next holder's tombstone key (see `TRIPLES`): when it exists, the next
 * holder's round failed and was cleaned up, so the next token is placed nowhere; our token is
 * still released (deleted, no room served) and the reply is {3, 0, released}.
 */
export const HANDOVER_LUA = `-- edgelock handover
${KEY_TRIPLES}${SERVE_ROOM}${LENGTHEN}${TRIPLES}${FENCES}local n, void = triples() -- the lock's keys; the next holder's tombstone
local token = ARGV[1] -- our token, released
local nextToken = ARGV[2] -- the next holder's token, placed
local ttl = ARGV[3] -- its lease, ms
local fencing = ARGV[4] == "1" -- issue a fence on its grant
local member = ARGV[5] -- its waiter entry, out of the rooms on its grant ("": none)
local now = ARGV[6] -- our epoch ms
local listenMs = ARGV[7] -- keep a key this long for a woken listener, ms
local place = ARGV[8] -- its place in the rooms ("": none)

-- The next holder's round failed and was cleaned up: place nothing, still release ours.
if discarded(void) then
  local released = 0
  for i = 1, n do
    if redis.call("GET", lockKey(i)) == token then
      redis.call("DEL", lockKey(i))
      released = 1
    end
  end
  return {3, 0, released}
end
local currents = {}
local released, free, nexts = 0, 0, 0
local mine, block = nil, nil
for i = 1, n do
  local current = redis.call("GET", lockKey(i))
  if current == token then
    released = 1
    current = false
  end
  currents[i] = current
  if current == false then
    free = free + 1
  elseif current == nextToken then
    nexts = nexts + 1
  elseif reservedBy(current, token) then
    mine = mine or i
  else
    block = block or i
  end
end
-- A re-send that finds the next token everywhere: lengthen only, no second fence.
if nexts == n then
  for i = 1, n do
    lengthen(lockKey(i), ttl)
  end
  local fence = 0
  if fencing then
    fence = counters()
  end
  return {1, fence, 1}
end
if free + nexts == n then
  -- Another instance's waiter placed before the next holder goes first: local callers cannot
  -- keep a key from the others by handing it on among themselves.
  if place and place ~= "" then
    local picks, first = {}, nil
    for i = 1, n do
      if currents[i] == false and isRoom(i) then
        local ahead = tonumber(place)
        local waiter, ms, listener = serve(roomKey(i), tonumber(now), tonumber(listenMs), ahead)
        if waiter then
          picks[i] = {waiter, ms, listener}
          first = first or ms
        end
      end
    end
    if first then
      for i = 1, n do
        local pick = picks[i]
        if pick then
          reserve(i, pick[1], pick[2], pick[3], token)
        elseif currents[i] == false then
          redis.call("DEL", lockKey(i))
        end
      end
      return {3, first, released}
    end
  end
  for i = 1, n do
    if currents[i] == false then
      redis.call("SET", lockKey(i), nextToken, "PX", ttl)
    else
      lengthen(lockKey(i), ttl)
    end
    if member and member ~= "" and isRoom(i) then
      redis.call("ZREM", roomKey(i), member)
    end
  end
  local fence = 0
  if fencing then
    if free > 0 then
      fence = issue()
    else
      fence = counters()
    end
  end
  return {1, fence, released}
end
-- A re-send: the first request reserved a key for an earlier waiter.
if mine then
  return {3, redis.call("PTTL", lockKey(mine)), 1}
end
local current = currents[block]
local pttl = redis.call("PTTL", lockKey(block))
if string.sub(current, 1, 5) == "done:" then
  return {2, pttl, -1}
end
if string.sub(current, 1, 5) == "wake:" then
  return {3, pttl, -1}
end
return {0, pttl, -1}
`;

/**
 * Leave the wait room: remove waiter `member` from every key's room (see ACQUIRE), where the room
 * key is a room, and drop a reservation a release made for it meanwhile (`wake:<member>|…`:
 * nobody else may take it, and this waiter will not come for it). Sent by a waiter that stopped
 * waiting, and after a grant to the nodes that refused it (their last look registered it there).
 * Returns 1 when any room entry was removed, else 0.
 */
export const LEAVE_LUA = `-- edgelock leave
${KEY_TRIPLES}local member = ARGV[1] -- the waiter leaving

local removed = 0
for i = 1, keyCount() do
  if redis.call("TYPE", roomKey(i)).ok == "zset" then
    removed = removed + redis.call("ZREM", roomKey(i), member)
  end
  if redis.call("TYPE", lockKey(i)).ok == "string" then
    local current = redis.call("GET", lockKey(i))
    -- Only a reservation for this waiter: never a token, never another waiter's reservation.
    if string.sub(current, 1, #member + 6) == "wake:" .. member .. "|" then
      redis.call("DEL", lockKey(i))
    end
  end
end
if removed > 1 then
  removed = 1
end
return removed
`;

/**
 * Discard the token of a failed round: the cleanup of a failed acquire or hand-over, and the undo
 * of a failed resume. `token` = the round's token, `keepMs` = ms to keep its tombstone (the
 * round's TTL), `restore` (optional, a resume's undo) = the ticket's token to put back. KEYS: the
 * triples, then the token's tombstone key (see `TRIPLES`) — for a resume's undo, the ticket's
 * record of failed resumes `<first lock key>:void:<ticket's token>` instead, to which `token` is
 * appended (with a comma; the record never expires earlier than it would have), and which RESUME
 * reads.
 *
 * Every key holding the token is deleted, or with `restore` set back to the ticket's token with
 * the expiry it has (RESUME placed `token` only where the ticket's token was, so this undoes it;
 * with no expiry left the key is deleted: every write of a lock key carries a PX). Then the
 * tombstone is written, whatever the keys held: a request of the round that runs here later (it
 * timed out, or was re-sent) finds it and places nothing, so the order in which the cleanup and a
 * late request arrive no longer matters (docs/SAFETY.md §2, L3). It lives `keepMs`, and for an
 * undo at least as long as any key holding either token has left: a late RESUME places its token
 * with max(ttl, the ticket's token's expiry), so the tombstone outlives the ticket's token there
 * and a RESUME arriving after the tombstone finds nothing to swap. No room is served: freeing a
 * minority of nodes does not free the lock. Returns 1 when any key held the token, 0 when every
 * key was absent, -1 otherwise (left alone).
 */
export const DISCARD_LUA = `-- edgelock discard
${KEY_TRIPLES}${TRIPLES}local n, void = triples() -- the lock's keys; the tombstone (an undo: the ticket's record)
local token = ARGV[1] -- the failed round's token
local keepMs = ARGV[2] -- the tombstone lives at least this long, ms (the round's TTL)
local restore = ARGV[3] -- an undo: the ticket's token to put back (nil: delete)

local found, gone = 0, 0
local keep = tonumber(keepMs)
for i = 1, n do
  local key = lockKey(i)
  local current = redis.call("GET", key)
  local left = redis.call("PTTL", key)
  -- An undo's tombstone outlives either token here: a late RESUME keeps the longer expiry.
  if restore and (current == token or current == restore) and left > keep then
    keep = left
  end
  if current == token then
    found = 1
    if restore then
      if left > 0 then
        redis.call("SET", key, restore, "PX", left)
      else
        redis.call("DEL", key)
      end
    else
      redis.call("DEL", key)
    end
  elseif current == false then
    gone = gone + 1
  end
end
if void and restore then
  local record = ""
  if redis.call("TYPE", void).ok == "string" then
    record = redis.call("GET", void)
    local left = redis.call("PTTL", void)
    if left > keep then
      keep = left
    end
  end
  if not string.find(record, token .. ",", 1, true) then
    record = record .. token .. ","
  end
  redis.call("SET", void, record, "PX", keep)
elseif void then
  redis.call("SET", void, "1", "PX", keep)
end
if found == 1 then
  return 1
end
if gone == n then
  return 0
end
return -1
`;
