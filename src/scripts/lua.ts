/**
 * Lua source of every script edgelock runs. All durations are milliseconds (PX, PEXPIRE, PTTL).
 * Every script takes its keys in triples: KEYS[3i-2] = a lock key, KEYS[3i-1] = its fence counter
 * key and KEYS[3i] = its wait room key (the sorted set of waiters to wake on release, and the stem
 * of their wake-up channels). A lock on one key passes one triple; a lock on several keys (issue
 * 15 §2) passes one triple per key, sorted, and ACQUIRE, EXTEND, RESUME, RELEASE, HANDOVER,
 * FENCE_RAISE and LEAVE act on all of them in one atomic step per node: a node grants every key of
 * the set or none. COMPLETE, RECORD, INSPECT and FORCE_RELEASE read the first triple only (once(),
 * idempotency and the operator commands take one key). Scripts return integers only (so no
 * client-side deserialization or base64 decoding can alter a reply), except RECORD.
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
 * The SHA-1 of each source is a literal in `scripts.ts`; changing a byte here changes the hash,
 * which the unit test (WebCrypto) and the integration test (SCRIPT LOAD) catch.
 *
 * @module
 */

/**
 * Lua shared by the scripts that keep a token where it is: `lengthen(key, ttl)` raises the key's
 * expiry to `ttl` ms when less is left, and never lowers it (docs/SAFETY.md, E1: a request that
 * timed out may still run, late or after a longer extension).
 */
const LENGTHEN = `local function lengthen(key, ttl)
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
 * on this node (docs/SAFETY.md, F1). Needs `TRIPLES` before it (a tombstone key is no triple).
 */
const FENCES = `local function counters()
  local top = 0
  for i = 1, (triples()) do
    local c = tonumber(redis.call("GET", KEYS[3 * i - 1]) or "0")
    if c > top then
      top = c
    end
  end
  return top
end
local function issue()
  local f = counters() + 1
  for i = 1, (triples()) do
    redis.call("SET", KEYS[3 * i - 1], f)
  end
  return f
end
`;

/**
 * Lua shared by the scripts that place a token (ACQUIRE, HANDOVER, RESUME) and by DISCARD:
 * `triples()` is the number of key triples and the tombstone key passed after them, if any (one
 * key more than the triples: `<first lock key>:void:<token>`, see `DISCARD_LUA`). A tombstone
 * means the token's round failed and was cleaned up: a request of that round that runs later (it
 * timed out, or was re-sent) must place nothing (docs/SAFETY.md, L3).
 */
const TRIPLES = `local function triples()
  local n = math.ceil(#KEYS / 3)
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
 * Acquire. ARGV[1] = token, ARGV[2] = ttl ms, ARGV[3] = "1" to issue a fence.
 * Returns {1, fence} when granted (fence 0 without fencing), {0, pttl} when held by another,
 * {2, pttl} when the key holds a done marker (`done:<token>`, written by COMPLETE; tokens are hex,
 * so no token starts with `done:`), pttl being the marker's remaining retention. A retried
 * request that finds its own token never shortens the TTL and never counts a second fence.
 *
 * Wait room registration (sent by every caller waiting for one key): ARGV[4] = the waiter
 * (`<deadline epoch ms>:<listener>:<id>`, listener = the hex id of its instance's wake-up
 * channel, or `p<ms>` for a poller: its longest sleep plus a look), ARGV[5] = its place (epoch ms
 * of its call), ARGV[6] = ms to keep the wait room. When held by another, the waiter is added to
 * every key's wait room (a sorted set by place) that RELEASE and HANDOVER serve; when granted, it
 * leaves them. A room key of another type (a user key) is left alone. A key that a release
 * reserved for this waiter (`wake:<waiter>|<releaser's token>`) counts as free for it, and as held
 * for everyone else, reported as {3, pttl}: the reservation's PTTL is short, but the waiter is
 * about to take the key for a whole lease.
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
${LENGTHEN}${TRIPLES}${FENCES}local n, void = triples()
if discarded(void) then
  return {0, redis.call("PTTL", void)}
end
local w = ARGV[4]
local currents = {}
local fresh = false
local flag, wait = nil, -2
for i = 1, n do
  local current = redis.call("GET", KEYS[3 * i - 2])
  if w and current and string.sub(current, 1, #w + 6) == "wake:" .. w .. "|" then
    current = false
  end
  currents[i] = current
  if current == false then
    fresh = true
  elseif current ~= ARGV[1] then
    local pttl = redis.call("PTTL", KEYS[3 * i - 2])
    if string.sub(current, 1, 5) == "done:" then
      return {2, pttl}
    end
    if flag ~= 0 then
      flag = string.sub(current, 1, 5) == "wake:" and 3 or 0
    end
    if wait ~= -1 and (pttl == -1 or pttl > wait) then
      wait = pttl
    end
  end
end
if flag == nil then
  for i = 1, n do
    if currents[i] == false then
      redis.call("SET", KEYS[3 * i - 2], ARGV[1], "PX", ARGV[2])
    else
      lengthen(KEYS[3 * i - 2], ARGV[2])
    end
    if w and redis.call("TYPE", KEYS[3 * i]).ok == "zset" then
      redis.call("ZREM", KEYS[3 * i], w)
    end
  end
  local f = 0
  if ARGV[3] == "1" then
    if fresh then
      f = issue()
    else
      f = counters()
    end
  end
  return {1, f}
end
if w then
  for i = 1, n do
    local room = KEYS[3 * i]
    local t = redis.call("TYPE", room).ok
    if t == "zset" or t == "none" then
      redis.call("ZADD", room, ARGV[5], w)
      if redis.call("PTTL", room) < tonumber(ARGV[6]) then
        redis.call("PEXPIRE", room, ARGV[6])
      end
    end
  end
end
return {flag, wait}
`;

/**
 * Lua shared by RELEASE and HANDOVER: serve a key's wait room (see ACQUIRE) on a release by
 * `ARGV[1]`. `serve(room, now, listenMs, before)` scans the first 8 waiters by place and returns the one
 * to reserve the key for, with the reservation's ms and its channel (nil for a poller):
 * - a waiter whose deadline ends within `listenMs` stopped waiting or is about to: removed;
 * - with `before` (the place of a waiter of the releaser's own instance, who would otherwise get
 *   the key next), the scan stops at the first place not earlier than it: that local waiter came
 *   first; a poller placed earlier (`<deadline>:p<ms>:<id>`) is served, for its own `<ms>` (its
 *   longest sleep plus a look) or until its deadline;
 * - without `before`, pollers are skipped (they find the key free on their next look, like
 *   anyone), and the first listener is served for `listenMs`.
 * `reserve(i, member, ms, listener)` takes the waiter out of key i's room, sets key i to
 * `wake:<member>|<ARGV[1]>` (free for that waiter only; the releaser's token lets a re-sent
 * release recognise its own reservation) and publishes the member on the listener's channel.
 * With several keys each key's room is served on its own. (The client registers no waiter for
 * several keys: a reservation of one of its keys while another is held would keep that key idle.)
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
local function reserve(i, member, ms, listener)
  local room = KEYS[3 * i]
  redis.call("ZREM", room, member)
  redis.call("SET", KEYS[3 * i - 2], "wake:" .. member .. "|" .. ARGV[1], "PX", ms)
  if listener then
    redis.call("PUBLISH", room .. ":" .. listener, member)
  end
end
local function isRoom(i)
  return redis.call("TYPE", KEYS[3 * i]).ok == "zset"
end
local function reservedBy(value, token)
  return string.sub(value, 1, 5) == "wake:" and string.sub(value, -#token - 1) == "|" .. token
end
`;

/**
 * Extend. ARGV[1] = token, ARGV[2] = ttl ms.
 * Returns 1 extended (or already lasting at least ttl), 0 expired/absent (never resurrected), -1
 * held by someone else (several keys: 1 only when every key holds the token, then all are
 * extended; -1 when any key holds something else; 0 otherwise). Never shortens an expiry: a request that timed out may still run
 * (late, or after a shorter extension), and the holder's validity relies on no node dropping the
 * token earlier than any expiry it was granted (docs/SAFETY.md, lemma E).
 */
export const EXTEND_LUA = `-- edgelock extend
${LENGTHEN}local n = math.ceil(#KEYS / 3)
local absent = false
for i = 1, n do
  local current = redis.call("GET", KEYS[3 * i - 2])
  if current == false then
    absent = true
  elseif current ~= ARGV[1] then
    return -1
  end
end
if absent then
  return 0
end
for i = 1, n do
  lengthen(KEYS[3 * i - 2], ARGV[2])
end
return 1
`;

/**
 * Resume (a ticket taken to another invocation). ARGV[1] = the ticket's token, ARGV[2] = a fresh
 * token, ARGV[3] = ttl ms, ARGV[4] = "1" to issue a fence.
 * Returns {1, fence} resumed: the key now holds the fresh token, expiring no earlier than before
 * nor than ttl from now, and with ARGV[4] the fence counter was incremented (0 otherwise; a
 * re-send that finds the fresh token reports the counter as it is); {0, 0} absent (never
 * resurrected); {-1, 0} held by anything else — another resume of the same ticket rotated it
 * first, or another holder. Rotating the token makes a ticket single-use: of two resumes of one
 * ticket (a message delivered twice) at most one rotates it on a majority (docs/SAFETY.md,
 * theorem 3); the fresh fence orders the resumed lock after the sender, as a new grant. Several
 * keys: resumed only when every key holds the ticket's token; {-1, 0} when any key holds anything
 * but the two tokens or nothing; {0, 0} otherwise.
 *
 * After the triples, the ticket's record of failed resumes, `<first lock key>:void:<ticket's
 * token>` (see `TRIPLES`, `DISCARD_LUA`): the fresh tokens of this ticket's failed resumes whose
 * undo ran here, each followed by a comma. When it lists ARGV[2], this resume failed and was
 * undone here, so a RESUME of it that runs now (late, or re-sent) swaps nothing and returns
 * {-1, 0, 1}: the ticket stays resumable. Every reply has a third element, 1 when the record
 * exists here (a resume of this ticket failed: a node that holds "anything else" may hold that
 * resume's token until its undo lands there, so the client does not call the ticket lost), else 0.
 */
export const RESUME_LUA = `-- edgelock resume
${TRIPLES}${FENCES}local n, void = triples()
local undone = 0
if void and redis.call("TYPE", void).ok == "string" then
  undone = 1
  if string.find(redis.call("GET", void), ARGV[2] .. ",", 1, true) then
    return {-1, 0, 1}
  end
end
local ticket, fresh = 0, 0
for i = 1, n do
  local current = redis.call("GET", KEYS[3 * i - 2])
  if current == ARGV[1] then
    ticket = ticket + 1
  elseif current == ARGV[2] then
    fresh = fresh + 1
  elseif current ~= false then
    return {-1, 0, undone}
  end
end
if ticket == n then
  for i = 1, n do
    local ttl = tonumber(ARGV[3])
    local left = redis.call("PTTL", KEYS[3 * i - 2])
    if left > ttl then
      ttl = left
    end
    redis.call("SET", KEYS[3 * i - 2], ARGV[2], "PX", ttl)
  end
  local fence = 0
  if ARGV[4] == "1" then
    fence = issue()
  end
  return {1, fence, undone}
end
if fresh == n then
  return {1, counters(), undone}
end
return {0, 0, undone}
`;

/**
 * Release. ARGV[1] = token; to serve the wait room (see `SERVE_ROOM`): ARGV[2] = the releaser's
 * epoch ms, ARGV[3] = ms to keep the key for a woken listener, ARGV[4] (optional) = the place of
 * the releaser's own next waiter ("" for none), ARGV[5] (optional) = a one-shot run's counter
 * lifetime in ms: where the key held our token or is absent, its fence counter is made to live
 * at least that long and no longer than it would (`outlive`; a failed run of `once()` or of an
 * idempotent request, whose retry continues the count within it). Returns 1 released, 0
 * expired/absent, -1 held by someone else (left alone). Several keys: every key holding the token is released; 1 when any did (or holds
 * our reservation), 0 when all are absent, -1 otherwise.
 *
 * With ARGV[2], the key goes to the waiter `serve` picks, as a reservation, instead of being
 * deleted; that waiter's ACQUIRE takes it, newcomers wait behind it, and it expires soon if the
 * waiter is gone. A re-sent release that finds its own reservation reports 1. A cleanup after a
 * failed acquire sends no ARGV[2]: freeing a minority of nodes does not free the lock.
 */
export const RELEASE_LUA = `-- edgelock release
${SERVE_ROOM}${OUTLIVE}local n = math.ceil(#KEYS / 3)
local released, gone = 0, 0
for i = 1, n do
  local current = redis.call("GET", KEYS[3 * i - 2])
  if ARGV[5] and (current == ARGV[1] or current == false) then
    outlive(KEYS[3 * i - 1], ARGV[5])
  end
  if current == ARGV[1] then
    released = 1
    local member, ms, listener
    if ARGV[2] and isRoom(i) then
      local before = ARGV[4] and tonumber(ARGV[4])
      member, ms, listener = serve(KEYS[3 * i], tonumber(ARGV[2]), tonumber(ARGV[3]), before)
    end
    if member then
      reserve(i, member, ms, listener)
    else
      redis.call("DEL", KEYS[3 * i - 2])
    end
  elseif current == false then
    gone = gone + 1
  elseif reservedBy(current, ARGV[1]) then
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
 * Fence raise. ARGV[1] = fence, ARGV[2] = our token. Raises the counter to at least ARGV[1] (a
 * max, so it is idempotent and never lowers a counter). Returns {1, counter} when the lock key
 * holds our token, or is absent beside a counter without expiry (or none); {0, counter} otherwise:
 * where the key holds anything else another holder may already have taken its INCR below our
 * fence, so this raise does not order it after us and must not count towards the raise's majority
 * (docs/SAFETY.md, fence monotonicity). Where the key holds our token the counter keeps no expiry
 * (a one-shot key's counter may have one from an earlier run's end: from this grant on it lives
 * until this run's own end gives it one again). An absent key beside an expiring counter is a
 * one-shot key whose run ended there (possibly this raise's own run, the raise running late):
 * the raise does not count, and like every raise that does not count it keeps the counter's
 * expiry, so no late raise leaves a counter for ever; a counter it creates beside a done marker
 * expires with the marker (a late raise of the run that wrote it). Several keys:
 * every counter is raised, the reply's counter is the highest, and the raise counts only when
 * every lock key holds our token or is absent.
 */
export const FENCE_RAISE_LUA = `-- edgelock fence raise
local target = tonumber(ARGV[1])
local counts = 1
local top = 0
for i = 1, math.ceil(#KEYS / 3) do
  local counter = tonumber(redis.call("GET", KEYS[3 * i - 1]) or "0")
  local current = redis.call("GET", KEYS[3 * i - 2])
  local left = redis.call("PTTL", KEYS[3 * i - 1])
  local mine = current == ARGV[2] or (current == false and left < 0)
  if counter < target then
    redis.call("SET", KEYS[3 * i - 1], ARGV[1])
    counter = target
    if not mine and left == -2 and string.sub(current, 1, 5) == "done:" then
      left = redis.call("PTTL", KEYS[3 * i - 2])
    end
    if left >= 0 and not mine then
      redis.call("PEXPIRE", KEYS[3 * i - 1], math.max(math.floor(left), 1))
    end
  elseif mine and left >= 0 then
    redis.call("SET", KEYS[3 * i - 1], tostring(counter))
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
 * Complete (once(), idempotency): turn our lock into a done marker. ARGV[1] = token, ARGV[2] =
 * retention ms, ARGV[3] (optional) = a record to keep in the marker (the idempotency layer's
 * stored response: printable ASCII). Uses the first triple only. Returns 1 when it wrote
 * `done:<token>` (or `done:<token>|<record>`) with `PX retention` (the key held our token, or was
 * absent: our grant expired but the job did finish), 2 when a done marker is already there (a
 * re-sent request, or another run recorded it: the first record stays), 0 when another holder has
 * the key now (left alone). With a marker in place (1 or 2) the fence counter (KEYS[2], when
 * given) is made to live at least `retention` more (`outlive`): while the marker stands no token
 * is placed and no fence issued there, and once both are gone a later run starts a new count.
 */
export const COMPLETE_LUA = `-- edgelock complete
${OUTLIVE}local current = redis.call("GET", KEYS[1])
if current == ARGV[1] or current == false then
  local marker = "done:" .. ARGV[1]
  if ARGV[3] then
    marker = marker .. "|" .. ARGV[3]
  end
  redis.call("SET", KEYS[1], marker, "PX", ARGV[2])
  if KEYS[2] then
    outlive(KEYS[2], ARGV[2])
  end
  return 1
end
if string.sub(current, 1, 5) == "done:" then
  if KEYS[2] then
    outlive(KEYS[2], ARGV[2])
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
if redis.call("TYPE", KEYS[1]).ok ~= "string" then
  return {0, -2, ""}
end
local current = redis.call("GET", KEYS[1])
local pttl = redis.call("PTTL", KEYS[1])
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
 * Handover: release our grant and grant the key to the next waiter in one step. ARGV[1] = our
 * token, ARGV[2] = the next holder's token, ARGV[3] = its ttl ms, ARGV[4] = "1" to issue a fence,
 * ARGV[5] = the next holder's waiter entry ("" for none; removed from the wait room on the
 * grant), ARGV[6] = our epoch ms, ARGV[7] = ms to keep the key for a woken listener, ARGV[8] =
 * the next holder's place ("" for none).
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
 * holder's round failed and was cleaned up, so t′ is placed nowhere; our token is still released
 * (deleted, no room served) and the reply is {3, 0, released}.
 */
export const HANDOVER_LUA = `-- edgelock handover
${SERVE_ROOM}${LENGTHEN}${TRIPLES}${FENCES}local n, void = triples()
if discarded(void) then
  local released = 0
  for i = 1, n do
    if redis.call("GET", KEYS[3 * i - 2]) == ARGV[1] then
      redis.call("DEL", KEYS[3 * i - 2])
      released = 1
    end
  end
  return {3, 0, released}
end
local currents = {}
local released, free, nexts = 0, 0, 0
local mine, block = nil, nil
for i = 1, n do
  local current = redis.call("GET", KEYS[3 * i - 2])
  if current == ARGV[1] then
    released = 1
    current = false
  end
  currents[i] = current
  if current == false then
    free = free + 1
  elseif current == ARGV[2] then
    nexts = nexts + 1
  elseif reservedBy(current, ARGV[1]) then
    mine = mine or i
  else
    block = block or i
  end
end
if nexts == n then
  for i = 1, n do
    lengthen(KEYS[3 * i - 2], ARGV[3])
  end
  local fence = 0
  if ARGV[4] == "1" then
    fence = counters()
  end
  return {1, fence, 1}
end
if free + nexts == n then
  if ARGV[8] and ARGV[8] ~= "" then
    local picks, first = {}, nil
    for i = 1, n do
      if currents[i] == false and isRoom(i) then
        local now, listenMs, before = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
        local member, ms, listener = serve(KEYS[3 * i], now, listenMs, before)
        if member then
          picks[i] = {member, ms, listener}
          first = first or ms
        end
      end
    end
    if first then
      for i = 1, n do
        local pick = picks[i]
        if pick then
          reserve(i, pick[1], pick[2], pick[3])
        elseif currents[i] == false then
          redis.call("DEL", KEYS[3 * i - 2])
        end
      end
      return {3, first, released}
    end
  end
  for i = 1, n do
    if currents[i] == false then
      redis.call("SET", KEYS[3 * i - 2], ARGV[2], "PX", ARGV[3])
    else
      lengthen(KEYS[3 * i - 2], ARGV[3])
    end
    if ARGV[5] and ARGV[5] ~= "" and isRoom(i) then
      redis.call("ZREM", KEYS[3 * i], ARGV[5])
    end
  end
  local fence = 0
  if ARGV[4] == "1" then
    if free > 0 then
      fence = issue()
    else
      fence = counters()
    end
  end
  return {1, fence, released}
end
if mine then
  return {3, redis.call("PTTL", KEYS[3 * mine - 2]), 1}
end
local current = currents[block]
local pttl = redis.call("PTTL", KEYS[3 * block - 2])
if string.sub(current, 1, 5) == "done:" then
  return {2, pttl, -1}
end
if string.sub(current, 1, 5) == "wake:" then
  return {3, pttl, -1}
end
return {0, pttl, -1}
`;

/**
 * Leave the wait room: remove waiter ARGV[1] from KEYS[3] (see ACQUIRE), if KEYS[3] is a room, and
 * drop a reservation a release made for it meanwhile (`wake:<ARGV[1]>|…`: nobody else may take it,
 * and this waiter will not come for it). Sent by a waiter that stopped waiting, and after a grant
 * to the nodes that refused it (their last look registered it there). Several keys: every key's
 * room and reservation. Returns 1 when any room entry was removed, else 0.
 */
export const LEAVE_LUA = `-- edgelock leave
local removed = 0
for i = 1, math.ceil(#KEYS / 3) do
  if redis.call("TYPE", KEYS[3 * i]).ok == "zset" then
    removed = removed + redis.call("ZREM", KEYS[3 * i], ARGV[1])
  end
  if redis.call("TYPE", KEYS[3 * i - 2]).ok == "string" then
    local current = redis.call("GET", KEYS[3 * i - 2])
    if string.sub(current, 1, #ARGV[1] + 6) == "wake:" .. ARGV[1] .. "|" then
      redis.call("DEL", KEYS[3 * i - 2])
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
 * of a failed resume. ARGV[1] = the round's token, ARGV[2] = ms to keep its tombstone (the round's
 * TTL), ARGV[3] (optional, a resume's undo) = the ticket's token to put back. KEYS: the triples,
 * then the token's tombstone key (see `TRIPLES`) — for a resume's undo, the ticket's record of
 * failed resumes `<first lock key>:void:<ticket's token>` instead, to which ARGV[1] is appended
 * (with a comma; the record never expires earlier than it would have), and which RESUME reads.
 *
 * Every key holding the token is deleted, or with ARGV[3] set back to the ticket's token with the
 * expiry it has (RESUME placed ARGV[1] only where the ticket's token was, so this undoes it; with
 * no expiry left the key is deleted: every write of a lock key carries a PX). Then the tombstone
 * is written, whatever the keys held: a request of the round that runs here later (it timed out,
 * or was re-sent) finds it and places nothing, so the order in which the cleanup and a late
 * request arrive no longer matters (docs/SAFETY.md, L3). It lives ARGV[2] ms, and for an undo at
 * least as long as any key holding either token has left: a late RESUME places its token with
 * max(ttl, the ticket's token's expiry), so the tombstone outlives the ticket's token there and a
 * RESUME arriving after the tombstone finds nothing to swap. No room is served: freeing a
 * minority of nodes does not free the lock. Returns 1 when any key held the token, 0 when every key
 * was absent, -1 otherwise (left alone).
 */
export const DISCARD_LUA = `-- edgelock discard
${TRIPLES}local n, void = triples()
local found, gone = 0, 0
local keep = tonumber(ARGV[2])
for i = 1, n do
  local key = KEYS[3 * i - 2]
  local current = redis.call("GET", key)
  local left = redis.call("PTTL", key)
  if ARGV[3] and (current == ARGV[1] or current == ARGV[3]) and left > keep then
    keep = left
  end
  if current == ARGV[1] then
    found = 1
    if ARGV[3] then
      if left > 0 then
        redis.call("SET", key, ARGV[3], "PX", left)
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
if void and ARGV[3] then
  local record = ""
  if redis.call("TYPE", void).ok == "string" then
    record = redis.call("GET", void)
    local left = redis.call("PTTL", void)
    if left > keep then
      keep = left
    end
  end
  if not string.find(record, ARGV[1] .. ",", 1, true) then
    record = record .. ARGV[1] .. ","
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
