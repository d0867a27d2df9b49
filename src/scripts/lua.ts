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
export const KEY_TRIPLES = `-- KEYS: per lock key (sorted), the key, its fence counter and its wait room.
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
 * The look number a holder record (`^`, `^<j>`) gets once no pass of the call may remove its
 * token there: above every look a call numbers (docs/SAFETY.md §2 P4). Written as this very
 * string (Lua's `tostring` would print a number this large in another form).
 */
export const HELD_LOOK = "100000000000000";

/**
 * Lua shared by the scripts that keep a token where it is: `lengthen(key, ttl)` raises the key's
 * expiry to `ttl` ms when less is left, and never lowers it (docs/SAFETY.md §2, E1: a request that
 * timed out may still run, late or after a longer extension).
 */
export const LENGTHEN = `local function lengthen(key, ttl)
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
export const TRIPLES = `local function triples()
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
 * The slot scripts' form of `QUEUE` (`queueLua({ slots: true })`, docs/design/semaphore.md §3 "What changes in the Lua"):
 * one room for the P slots of a semaphore, every triple naming its own slot key and the same room.
 * `slotOf[i]` is triple i's slot index (from ARGV, see `SLOTS` in semaphore-lua.ts); the holder a
 * node placed on slot j is the field `^<j>`; a record has three fields more,
 * `…|prefer|preferUntil|permits` (the slot it prefers, "" for none, and the node time the
 * preference ends; the caller's P), and `head` serves a record only a slot below its P, and only
 * its preferred slot while the preference lasts; a hand-off's message ends with `|<slot>`.
 */
const SLOT_QUEUE = {
  caret: `"^" .. slotOf[i]`,
  record: `  -- A preference lasts preferMs of node time from this registration.
  local preferUntil = 0
  if r.prefer ~= "" then
    preferUntil = hi + tonumber(r.preferMs)
  end
  local record = {r.place, hi + tonumber(r.waitMs), r.listener, r.look, hi, r.handMs, r.fencing,
    r.prefer, preferUntil, r.permits}
`,
  notHolder: `    if string.sub(token, 1, 1) ~= "^" and token ~= skip then
`,
  takes: `takes(i, f, lo) and `,
  message: `  local message = token .. "|" .. f[4] .. "|" .. gap .. "|" .. f[6] .. "|" .. fence .. "|" ..
    slotOf[i]
`,
  before: `local function takes(i, f, lo)
  -- Only a slot below the caller's P (its looks never see the others), and while a preference
  -- lasts, only the preferred slot.
  if slotOf[i] >= tonumber(f[10]) then
    return false
  end
  return f[8] == "" or tonumber(f[8]) == slotOf[i] or tonumber(f[9]) <= lo
end
`,
};

/** `QUEUE` as the lock scripts have it (one room per lock key, its holder `^`). */
const LOCK_QUEUE: typeof SLOT_QUEUE = {
  caret: `"^"`,
  record: `  local record = {r.place, hi + tonumber(r.waitMs), r.listener, r.look, hi, r.handMs, r.fencing}
`,
  notHolder: `    if token ~= "^" and token ~= skip then
`,
  takes: "",
  message: `  local message = token .. "|" .. f[4] .. "|" .. gap .. "|" .. f[6] .. "|" .. fence
`,
  before: "",
};

/**
 * The Lua of `QUEUE` (below) for the lock scripts (`slots: false`: exactly the text every lock
 * script has shipped with, so their SHA-1s stay; test/scripts/shipped.test.ts) or for the
 * semaphore's slot scripts (`slots: true`: see `SLOT_QUEUE`).
 */
export function queueLua({ slots }: { readonly slots: boolean }): string {
  const { caret, record, notHolder, takes, message, before } = slots ? SLOT_QUEUE : LOCK_QUEUE;
  return `local function clock()
  local t = redis.call("TIME")
  local ms, us = tonumber(t[1]) * 1000, tonumber(t[2])
  return ms + math.floor(us / 1000), ms + math.ceil(us / 1000)
end
local function fields(value)
  local f = {}
  for part in string.gmatch(value .. "|", "([^|]*)|") do
    f[#f + 1] = part
  end
  return f
end
local function isQueue(i)
  -- A caller that passes only a lock key and its fence key has no queue.
  if roomKey(i) == nil then
    return false
  end
  local t = redis.call("TYPE", roomKey(i)).ok
  return t == "hash" or t == "none"
end
local function keepQueue(i, ms)
  local left = redis.call("PTTL", roomKey(i))
  -- A queue just created has no expiry yet: every queue gets one.
  if left == -1 or left < tonumber(ms) then
    redis.call("PEXPIRE", roomKey(i), ms)
  end
end
local function holder(i, token, place, look, from)
  redis.call("HSET", roomKey(i), ${caret}, token .. "|" .. place .. "|" .. look .. "|" .. from)
end
local function unhold(i, token)
  if redis.call("TYPE", roomKey(i)).ok == "hash" then
    local h = redis.call("HGET", roomKey(i), ${caret})
    if h and fields(h)[1] == token then
      redis.call("HDEL", roomKey(i), ${caret})
    end
  end
end
local function register(i, token, hi, r)
  if not isQueue(i) then
    return
  end
  local old = redis.call("HGET", roomKey(i), token)
  -- Keep the newest look's time: a late, older registration never replaces it.
  if old and tonumber(fields(old)[4]) >= tonumber(r.look) then
    return
  end
${record}  redis.call("HSET", roomKey(i), token, table.concat(record, "|"))
  keepQueue(i, r.roomMs)
end
${before}local function head(i, lo, skip, limit)
  local all = redis.call("HGETALL", roomKey(i))
  local best, bestPlace, bestFields = nil, nil, nil
  for k = 1, #all, 2 do
    local token = all[k]
${notHolder}      local f = fields(all[k + 1])
      local place = tonumber(f[1])
      if tonumber(f[2]) <= lo then
        -- Its wait ended: it stopped waiting, or is gone.
        redis.call("HDEL", roomKey(i), token)
      elseif ${takes}(limit == nil or place < limit[1] or (place == limit[1] and token < limit[2]))
        and (best == nil or place < bestPlace or (place == bestPlace and token < best)) then
        best, bestPlace, bestFields = token, place, f
      end
    end
  end
  return best, bestFields
end
local function handoff(i, token, f, lo, from)
  local room = roomKey(i)
  redis.call("HDEL", room, token)
  -- Node ms since the registration of look f[4] ran here (p rounded up, now down).
  local gap = lo - tonumber(f[5])
  if gap < 0 then
    gap = 0
  end
  local fence = 0
  if f[7] == "1" then
    fence = tonumber(redis.call("GET", fenceKey(i)) or "0") + 1
  end
${message}  -- Nobody listens for it here (its process ended, or never listened): drop it, set nothing.
  if redis.call("PUBLISH", room .. ":" .. f[3], message) == 0 then
    return false
  end
  redis.call("SET", lockKey(i), token, "PX", f[6])
  if fence > 0 then
    redis.call("SET", fenceKey(i), fence)
  end
  holder(i, token, f[1], f[4], from)
  keepQueue(i, f[6])
  return true
end
local function serve(i, lo, skip, limit, from)
  if not isQueue(i) then
    return nil
  end
  for _ = 1, 8 do
    local token, f = head(i, lo, skip, limit)
    if token == nil then
      break
    end
    if handoff(i, token, f, lo, from) then
      return token, f
    end
  end
  -- The key stays free here: no holder to name, and a queue with no waiter left is deleted.
  redis.call("HDEL", roomKey(i), ${caret})
  return nil
end
`;
}

/**
 * Lua shared by the scripts that keep or serve a key's wait queue (docs/design/queue-handoff.md;
 * docs/SAFETY.md §2, P3). The queue is the room key, a hash: one field per waiting call, named by
 * the call's token (one token per call), holding `place|deadline|listener|look|p|handMs|fencing`
 * — its place (epoch ms of its call: the order, the same on every node), the node time its wait
 * ends, its instance's channel id, the number of the look that registered it, the node time that
 * registration ran (`p`, rounded up), the TTL of a hand-off to it and whether it issues fences —
 * and the field `^` = `token|place|look|from`: the token this node last placed on the key, its
 * place, the newest look of its call seen here, and the releaser that handed it over ("" for
 * none). Nothing in a queue is ever read as a grant: only the lock key is.
 *
 * - `clock()`: the node's clock in whole ms, rounded down and up (`TIME`; the clock Redis expires
 *   keys by). A gap is measured from a time rounded up to one rounded down: never overstated.
 * - `register(i, token, hi, r)`: record the call `token` in key i's queue at node time `hi`, from
 *   its registration `r` (`place`, `look`, `listener`, `waitMs`, `handMs`, `roomMs`, `fencing`
 *   "1"/"0": ACQUIRE's and PASS's arguments), unless the record there is of the same look or a newer one (a
 *   late request of an older look never replaces the `p` of a newer one).
 * - `head(i, lo, skip, limit)`: the first live waiter other than `skip`, placed before `limit`
 *   (`{place, token}`; nil: any); drops records whose wait ended.
 * - `handoff(i, token, f, lo)`: key i (free) to waiter `token`: `SET key token PX handMs`, a fence
 *   when it issues fences, and `token|look|gap|handMs|fence` published on its instance's channel;
 *   a waiter nobody listens for here (PUBLISH answers 0) is dropped instead, and nothing is set.
 * - `serve(i, lo, skip, limit, from)`: hand key i (free) to the first waiter that can take it;
 *   with none, the key stays free and `^` goes (a queue with no waiter left is then deleted).
 * - `unhold(i, token)`: forget `^` where it names `token` (its key was freed): a queue with
 *   nobody in it is deleted, and a lock nobody waits for leaves no queue behind.
 */
const QUEUE = queueLua({ slots: false });

/**
 * Acquire `token` for `ttl` ms, with `fencing` "1" issuing a fence.
 * Returns {1, fence, -1} when granted (fence 0 without fencing), {0, pttl, place} when held by
 * another, {2, pttl, -1} when the key holds a done marker (`done:<token>`, written by COMPLETE;
 * tokens are hex, so no token starts with `done:`), pttl being the marker's remaining retention.
 * `place` is the holder's place when this node placed it (see `QUEUE`) and the holder comes
 * before the caller in the queue's order (place, then token; a caller without a place comes after
 * everyone), else -1: the caller that is told a place gives way (P4). A request that
 * finds its own token never shortens the TTL and never counts a second fence (a re-send, or a
 * later look of the same call: P2); it raises the newest look in the queue's holder record
 * naming the token, and where no record names it (only an extended grant outlives its record)
 * it writes one with a look no pass reaches (`HELD_LOOK`, P4), however old the request.
 *
 * `place` (ARGV 4) is the caller's place, the epoch ms of its call ("" for none: placed after
 * every waiter). A free key with a live waiter placed before the caller is not the caller's: it
 * goes to that waiter (`serve`: a hand-off), and the caller is refused as held ({0, handMs,
 * place}). With a registration (ARGV 4–10, see `QUEUE`'s `registration`: a waiting call on one
 * key), the caller is registered in the queue whenever it is refused (see `QUEUE`'s `register`; the node time it ran is what a hand-off counts from),
 * and leaves it when granted. With several keys: granted only when every key is free (or ours)
 * and none has a waiter placed before the caller; each free key that has one is handed to its
 * waiter, and nothing is placed (M1: all or none).
 *
 * After the triples, the token's tombstone key (see `TRIPLES`): when it exists, the call of this
 * token ended and was cleaned up (DISCARD), so nothing is placed or registered and {0, pttl of
 * the tombstone, -1} is returned (only a request of a dead call, late or re-sent, gets it).
 */
export const ACQUIRE_LUA = `-- edgelock acquire
${KEY_TRIPLES}${LENGTHEN}${TRIPLES}${FENCES}${QUEUE}local n, void = triples() -- the lock's keys; the token's tombstone
local token = ARGV[1] -- the token to place
local ttl = ARGV[2] -- its lease, ms
local fencing = ARGV[3] == "1" -- issue a fence on a grant
local place = ARGV[4] -- the caller's place: epoch ms of its call ("" or nil: none)
local look = ARGV[5] -- a waiting call's look number, registered while held (nil: none)
local listener = ARGV[6] -- its instance's channel id
local waitMs = ARGV[7] -- how much longer it waits at most, ms
local handMs = ARGV[8] -- the TTL of a hand-off to it, ms
local roomMs = ARGV[9] -- keep the queue at least this long, ms
local handFence = ARGV[10] -- "1": a hand-off to it issues a fence

local reg = look and {place = place, look = look, listener = listener, waitMs = waitMs,
  handMs = handMs, roomMs = roomMs, fencing = handFence}

-- A late or re-sent request of a call that ended and was cleaned up places nothing.
if discarded(void) then
  return {0, redis.call("PTTL", void), -1}
end
local lo, hi = clock()
local limit = nil
if place and place ~= "" then
  limit = {tonumber(place), token}
end
local currents = {}
local fresh = false
local flag, wait, ahead = nil, -2, -1
for i = 1, n do
  local current = redis.call("GET", lockKey(i))
  currents[i] = current
  if current == false then
    fresh = true
  elseif current ~= token then
    local pttl = redis.call("PTTL", lockKey(i))
    if string.sub(current, 1, 5) == "done:" then
      return {2, pttl, -1}
    end
    flag = 0
    -- Report the longest wait among the keys in the way (-1, no expiry, is the longest).
    if wait ~= -1 and (pttl == -1 or pttl > wait) then
      wait = pttl
    end
    if n == 1 and isQueue(1) then
      local h = redis.call("HGET", roomKey(1), "^")
      local f = h and fields(h)
      local at = f and f[1] == current and tonumber(f[2])
      -- The holder's place, told only when the holder comes first in the queue's order (place,
      -- then token): a caller told of one gives way (P4), so of a tie exactly one does not.
      if at and (limit == nil or at < limit[1] or (at == limit[1] and current < token)) then
        ahead = at
      end
    end
  end
end
if flag == nil then
  -- Every key is free or ours. A free key goes to a live waiter placed before us first.
  for i = 1, n do
    if currents[i] == false then
      local t, f = serve(i, lo, token, limit, "")
      if t then
        flag = 0
        ahead = tonumber(f[1]) or -1
        if wait ~= -1 and tonumber(f[6]) > wait then
          wait = tonumber(f[6])
        end
      end
    end
  end
end
if flag == nil then
  -- Ours on every key: all or none.
  for i = 1, n do
    if currents[i] == false then
      redis.call("SET", lockKey(i), token, "PX", ttl)
    else
      lengthen(lockKey(i), ttl)
    end
    -- The holder's place and newest look, kept where someone queues (a lock nobody waits for
    -- keeps no queue).
    if isQueue(i) and (reg or redis.call("EXISTS", roomKey(i)) == 1) then
      redis.call("HDEL", roomKey(i), token)
      local h = redis.call("HGET", roomKey(i), "^")
      local f = h and fields(h)
      -- The newest look seen of the holder's call only goes up: a pass sent before it keeps
      -- what this look placed or found (P2).
      if f and f[1] == token then
        if reg and tonumber(reg.look) > tonumber(f[3]) then
          holder(i, token, f[2], reg.look, f[4])
        end
      elseif currents[i] == false then
        holder(i, token, place or "", reg and reg.look or 0, "")
      else
        -- Found with no record naming it: only an extended grant outlives its queue's record,
        -- and no pass may remove it (P4), however old this look is.
        holder(i, token, place or "", "${HELD_LOOK}", "")
      end
      keepQueue(i, ttl)
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
  return {1, f, -1}
end
if reg then
  for i = 1, n do
    register(i, token, hi, reg)
  end
end
return {flag, wait, ahead}
`;

/**
 * Extend `token`'s keys to `ttl` ms.
 * Returns 1 extended (or already lasting at least ttl), 0 expired/absent (never resurrected), -1
 * held by someone else (several keys: 1 only when every key holds the token, then all are
 * extended; -1 when any key holds something else; 0 otherwise). Never shortens an expiry: a
 * request that timed out may still run (late, or after a shorter extension), and the holder's
 * validity relies on no node dropping the token earlier than any expiry it was granted
 * (docs/SAFETY.md §2, E1; §3, E3).
 *
 * Where a key's queue names the token as its holder (the room's field `holder`, ARGV 3: `^`, or
 * `^<j>` for a semaphore's slot j), the newest look recorded for it becomes one that no pass
 * reaches: an extension counts this node for the holder, and a pass the call sent before its
 * grant, still in flight, must not remove it afterwards (docs/SAFETY.md §2, P4).
 */
export const EXTEND_LUA = `-- edgelock extend
${KEY_TRIPLES}${LENGTHEN}local n = keyCount() -- the lock's keys
local token = ARGV[1] -- the holder's token
local ttl = ARGV[2] -- the lease to extend to, ms
local caret = ARGV[3] or "^" -- the room's field naming the key's holder
local HELD = "${HELD_LOOK}" -- a look number no pass reaches

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
  local room = roomKey(i)
  if room and redis.call("TYPE", room).ok == "hash" then
    local h = redis.call("HGET", room, caret)
    -- token|place|look|from: the holder's record, its look raised past every pass (P4).
    local who, place, look, from = string.match(h or "", "^([^|]*)|([^|]*)|([^|]*)|(.*)$")
    if who == token and look ~= HELD then
      redis.call("HSET", room, caret, token .. "|" .. place .. "|" .. HELD .. "|" .. from)
    end
  end
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
 * Release `token`: delete it from every key that holds it and hand each key freed (or found
 * free) to its queue's first live waiter (see `QUEUE`: a hand-off; none waiting, the key stays
 * deleted). `before` (optional) = the place of the releaser's own next waiter ("" for none): then
 * only a waiter placed before it or in the same ms is served (that caller itself, when it waits
 * in the queue too), and otherwise the key stays free for that local caller. `counterMs` (optional) = a one-shot run's counter lifetime in ms: where the key held
 * our token or is absent, its fence counter is made to live at least that long and no longer than
 * it would (`outlive`; a failed run of `once()` or of an idempotent request, whose retry continues
 * the count within it). The releaser's own record leaves every queue (a holder waits for nothing).
 * After the triples, optionally, the token's tombstone key (see `TRIPLES`): the release of a grant
 * of a queued call, whose looks all carried this token, writes it with `PX keepMs`, so that a look
 * of the call that runs here later places and registers nothing (L3).
 * Returns 1 released (also a re-send that finds the waiter the first request handed the key to),
 * 0 expired/absent, -1 held by someone else (left alone). Several keys: every key holding the
 * token is released; 1 when any did, 0 when all are absent, -1 otherwise.
 */
export const RELEASE_LUA = `-- edgelock release
${KEY_TRIPLES}${TRIPLES}${QUEUE}${OUTLIVE}local n, void = triples() -- the lock's keys; the call's tombstone
local token = ARGV[1] -- the releaser's token
local before = ARGV[2] -- the place of the releaser's own next waiter ("" or nil: none)
local counterMs = ARGV[3] -- a one-shot run's counter lifetime, ms ("" or nil: a plain lock)
local keepMs = ARGV[4] -- how long the call's tombstone lives, ms (with a tombstone key)

local lo = clock()
local limit = nil
if before and before ~= "" then
  -- Places are whole ms: a waiter placed in the same ms as our next caller is as early as it (a
  -- tie, or that caller itself waiting in the queue), so it is served too.
  limit = {tonumber(before) + 1, ""}
end
local released, gone = 0, 0
for i = 1, n do
  local current = redis.call("GET", lockKey(i))
  if counterMs and counterMs ~= "" and (current == token or current == false) then
    outlive(fenceKey(i), counterMs)
  end
  local queue = isQueue(i)
  if queue then
    redis.call("HDEL", roomKey(i), token)
  end
  if current == token then
    released = 1
    redis.call("DEL", lockKey(i))
    unhold(i, token)
    current = false
  elseif current == false then
    gone = gone + 1
  elseif queue then
    -- A re-send: the first request handed the key on.
    local h = redis.call("HGET", roomKey(i), "^")
    if h and fields(h)[1] == current and fields(h)[4] == token then
      released = 1
    end
  end
  if current == false then
    serve(i, lo, token, limit, token)
  end
end
-- A queued call used one token for all its looks: a look of it that runs here later (it timed
-- out, or was re-sent) must place and register nothing (docs/SAFETY.md §2, L3).
if void then
  redis.call("SET", void, "1", "PX", keepMs)
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
 * Handover: release our grant (`token`) and grant the key to the next caller of our instance in
 * one step: its token `nextToken` for `ttl` ms, with `fencing` "1" issuing a fence; `place` = its
 * place ("" for none). Returns {grant, value, released}: grant and value as ACQUIRE ({1, fence}
 * granted to the next token, {0, pttl} held by another, {2, pttl} done marker, {3, handMs} handed
 * to an earlier waiter instead); released 1 when our token was there (or the request is a re-send
 * that already handed over), 0 when the key was absent (our grant had expired), -1 when someone
 * else holds it (left alone).
 *
 * A waiter of the queue placed before the next caller (another instance's, see `QUEUE`) goes
 * first: the key is handed to it (a hand-off) and the reply is {3, handMs, released}.
 *
 * Several keys: handed over only when every key is free, ours or already the next caller's (a
 * re-send); the fence as ACQUIRE's. When any key's queue has a waiter placed before the next
 * caller, no key goes to the next caller: the keys with such a waiter are handed to it, our other
 * keys are released and served, and the reply is {3, handMs, released}. A key in the way (someone
 * else's) refuses as for one key, leaving every key alone.
 *
 * After the triples, the next caller's tombstone key (see `TRIPLES`): when it exists, its call
 * ended and was cleaned up, so its token is placed nowhere; our token is still released (and the
 * key served) and the reply is {3, 0, released}.
 */
export const HANDOVER_LUA = `-- edgelock handover
${KEY_TRIPLES}${LENGTHEN}${TRIPLES}${FENCES}${QUEUE}local n, void = triples() -- the lock's keys; the next caller's tombstone
local token = ARGV[1] -- our token, released
local nextToken = ARGV[2] -- the next caller's token, placed
local ttl = ARGV[3] -- its lease, ms
local fencing = ARGV[4] == "1" -- issue a fence on its grant
local place = ARGV[5] -- its place ("" or nil: none)

local lo = clock()
-- The next caller's call ended and was cleaned up: place nothing, still release ours.
if discarded(void) then
  local released = 0
  for i = 1, n do
    if redis.call("GET", lockKey(i)) == token then
      redis.call("DEL", lockKey(i))
      unhold(i, token)
      released = 1
      serve(i, lo, token, nil, token)
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
  else
    local h = isQueue(i) and redis.call("HGET", roomKey(i), "^")
    if h and fields(h)[1] == current and fields(h)[4] == token then
      -- A re-send: the first request handed this key to an earlier waiter.
      mine = mine or i
    else
      block = block or i
    end
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
  -- Another instance's waiter placed before the next caller goes first: local callers cannot
  -- keep a key from the others by handing it on among themselves.
  if place and place ~= "" then
    local first = nil
    for i = 1, n do
      if currents[i] == false then
        local t, f = serve(i, lo, nextToken, {tonumber(place), nextToken}, token)
        if t then
          first = first or tonumber(f[6])
          currents[i] = t
        end
      end
    end
    if first then
      for i = 1, n do
        if currents[i] == false then
          redis.call("DEL", lockKey(i))
          unhold(i, token)
          serve(i, lo, token, nil, token)
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
    -- Where someone queues, the queue keeps the new holder's place (a pass compares it).
    if isQueue(i) and redis.call("EXISTS", roomKey(i)) == 1 then
      redis.call("HDEL", roomKey(i), nextToken)
      holder(i, nextToken, place or "", 0, token)
      keepQueue(i, ttl)
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
-- A re-send: the first request handed a key to an earlier waiter.
if mine then
  return {3, redis.call("PTTL", lockKey(mine)), 1}
end
local current = currents[block]
local pttl = redis.call("PTTL", lockKey(block))
if string.sub(current, 1, 5) == "done:" then
  return {2, pttl, -1}
end
return {0, pttl, -1}
`;

/**
 * Leave the wait queues: remove the call `token`'s record from every key's queue (see `QUEUE`),
 * where the room key is a queue. Sent after a grant to the nodes that refused it (their last look
 * registered it there). A key already handed to it stays its own: it holds the lock, and its
 * release removes it. (A call that stops waiting without a grant sends DISCARD instead, which also
 * takes back a key handed to it.) Returns 1 when any record was removed, else 0.
 */
export const LEAVE_LUA = `-- edgelock leave
${KEY_TRIPLES}local token = ARGV[1] -- the call leaving

local removed = 0
for i = 1, keyCount() do
  if roomKey(i) and redis.call("TYPE", roomKey(i)).ok == "hash" then
    removed = removed + redis.call("HDEL", roomKey(i), token)
  end
end
if removed > 1 then
  removed = 1
end
return removed
`;

/**
 * Discard the token of a call that ended without a grant, or of a failed round: the cleanup of a
 * failed acquire or hand-over, and the undo of a failed resume. `token` = the call's (or round's)
 * token, `keepMs` = ms to keep its tombstone (the round's TTL), `restore` (optional, a resume's
 * undo) = the ticket's token to put back. KEYS: the triples, then the token's tombstone key (see
 * `TRIPLES`) — for a resume's undo, the ticket's record of failed resumes `<first lock key>:void:
 * <ticket's token>` instead, to which `token` is appended (with a comma; the record never expires
 * earlier than it would have), and which RESUME reads.
 *
 * Every key holding the token is deleted, or with `restore` set back to the ticket's token with
 * the expiry it has (RESUME placed `token` only where the ticket's token was, so this undoes it;
 * with no expiry left the key is deleted: every write of a lock key carries a PX). A key deleted
 * goes to its queue's first live waiter (`serve`: freeing one node never frees the lock, but the
 * key is free there, and the waiter it is handed to counts it like any hand-off). The token's own
 * record leaves every queue, so no hand-off reaches it here any more. Then the tombstone is
 * written, whatever the keys held: a request of the call that runs here later (it timed out, or
 * was re-sent) finds it and places and registers nothing, so the order in which the cleanup and a
 * late request arrive no longer matters (docs/SAFETY.md §2, L3). It lives `keepMs`, and for an
 * undo at least as long as any key holding either token has left: a late RESUME places its token
 * with max(ttl, the ticket's token's expiry), so the tombstone outlives the ticket's token there
 * and a RESUME arriving after the tombstone finds nothing to swap. Returns 1 when any key held
 * the token, 0 when every key was absent, -1 otherwise (left alone).
 */
export const DISCARD_LUA = `-- edgelock discard
${KEY_TRIPLES}${TRIPLES}${QUEUE}local n, void = triples() -- the lock's keys; the tombstone (an undo: the ticket's record)
local token = ARGV[1] -- the failed round's token
local keepMs = ARGV[2] -- the tombstone lives at least this long, ms (the round's TTL)
local restore = ARGV[3] -- an undo: the ticket's token to put back (nil: delete)

local lo = clock()
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
  if isQueue(i) then
    redis.call("HDEL", roomKey(i), token)
  end
  if current == token then
    found = 1
    if restore and left > 0 then
      redis.call("SET", key, restore, "PX", left)
    else
      redis.call("DEL", key)
      unhold(i, token)
      serve(i, lo, token, nil, "")
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

/**
 * Pass (a waiting call gives up the key on this node without ending its call; one key): where
 * the key holds `token` and the queue's holder record (`QUEUE`'s `^`) names the call with a look
 * older than this pass's own number `look`, delete it and hand the key to the queue's first live
 * waiter placed before the call (`serve`), or leave it free when nobody waits here; with only
 * later waiters here, keep it (a pass gives way to earlier callers only). Then, wherever the key
 * does not hold `token`, or kept it so, register the call again with its place, under the pass's
 * look (ARGV 2–8: the registration, as ACQUIRE's): beside a kept token, so that the key goes to
 * the call first when the token lapses. A look
 * numbered at or after the pass that placed or found `token` here first keeps it: the client,
 * once it sent the pass, counts only what looks numbered from the pass on placed (P2), so a pass
 * that runs late never removes a placement the client counts (docs/SAFETY.md §2, P4); nor one an
 * extension counted (EXTEND raises the record's look past every pass), nor a token with no record
 * of its holder here (the queue expired under an extended grant). KEYS: the
 * triple, then the token's tombstone (see `TRIPLES`): after the call's cleanup nothing is done.
 * Returns {1, pttl} passed, {0, pttl} kept or not held here, pttl being the key's after the step.
 */
export const PASS_LUA = `-- edgelock pass
${KEY_TRIPLES}${TRIPLES}${QUEUE}local n, void = triples() -- the lock's key; the call's tombstone
local token = ARGV[1] -- the passing call's token
local place = ARGV[2] -- its place: epoch ms of its call
local look = ARGV[3] -- the pass's own look number
local listener = ARGV[4] -- its instance's channel id
local waitMs = ARGV[5] -- how much longer it waits at most, ms
local handMs = ARGV[6] -- the TTL of a hand-off to it, ms
local roomMs = ARGV[7] -- keep the queue at least this long, ms
local handFence = ARGV[8] -- "1": a hand-off to it issues a fence

local reg = {place = place, look = look, listener = listener, waitMs = waitMs, handMs = handMs,
  roomMs = roomMs, fencing = handFence}

if discarded(void) then
  return {0, redis.call("PTTL", lockKey(1))}
end
local lo, hi = clock()
local passed = 0
local current = redis.call("GET", lockKey(1))
if current == token then
  local h = isQueue(1) and redis.call("HGET", roomKey(1), "^")
  local f = h and fields(h)
  -- Only a placement this node recorded for a look before the pass is passed. A look numbered at
  -- or after it placed or found the token here, or an extension counted it (EXTEND): keep it.
  -- No record of the call as the holder: the queue expired under an extended token, so it may be
  -- a grant: keep it too (it leaves at the call's end).
  if f and f[1] == token and tonumber(f[3]) < tonumber(reg.look) then
    -- Give way only to callers placed before the passer: an earlier waiter here, or, with
    -- nobody waiting here, whoever looks next. With only later waiters, keep it: handing it to
    -- one lets a later call overtake the passer, and helps nobody placed before it (the holder
    -- that made it pass released, or does not wait here).
    local limit = {tonumber(place), token}
    if head(1, lo, token, limit) or not head(1, lo, token, nil) then
      redis.call("DEL", lockKey(1))
      unhold(1, token)
      passed = 1
      current = false
      serve(1, lo, token, limit, token)
    else
      -- Kept: the call no longer counts it (only looks from the pass on), so it is registered
      -- here too, and a script that finds the key free once the token lapses serves it first.
      current = false
    end
  end
end
if current ~= token then
  register(1, token, hi, reg)
end
return {passed, redis.call("PTTL", lockKey(1))}
`;
