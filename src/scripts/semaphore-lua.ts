/**
 * Lua source of the semaphore's scripts (docs/design/semaphore.md §2 "One round picks one slot", §3 "What changes in the Lua"). A
 * semaphore S with P permits is P **slots**, each an ordinary lock key `S:permit:<j>` with its
 * fence key, sharing **one room** `S:permits:wait` (see `semaphoreKeys` in keys.ts). Every script
 * here takes the slots as key triples (`KEY_TRIPLES`), in the call's order (the slot indices
 * rotated by the call's offset), then the call's tombstone `S:permits:void:<token>` (`TRIPLES`),
 * and the triples' slot indices in one ARGV, comma-separated (`SLOTS`). The room is the slot form
 * of the lock's queue, `queueLua({ slots: true })` (lua.ts): the holder a node placed on slot j is
 * the room's field `^<j>`, a record carries a preference and the caller's P, and a hand-off's
 * message names its slot.
 *
 * What these scripts keep, on every node (docs/SAFETY.md §2, the semaphore's rows):
 * - **S1**, one slot per token: SEM_ACQUIRE scans every slot for its token before placing it, and
 *   a token has a record in the room only while it is on no slot (every script that finds or
 *   places a token deletes its record; a hand-off deletes the record before it sets the slot).
 * - L1 per slot key: a slot is written only when free (SEM_ACQUIRE, a hand-off) or holding the
 *   script's own token (lengthen, delete).
 * - L3 for every permit call: DISCARD_SLOTS and RELEASE_SLOTS write the call's tombstone, and a
 *   SEM_ACQUIRE or SEM_PASS that finds it does nothing.
 *
 * Shipped like the lock's scripts by `scripts/ship-lua.ts`, into `semaphore-shipped.ts`, with a
 * renaming of locals that extends the lock scripts' (so no lock script's text or SHA-1 changes).
 * Permits carry no fence in v1 (docs/design/semaphore.md §2 "Fencing: none in v1"): the fence keys are passed, never written.
 *
 * @module
 */
import { HELD_LOOK, KEY_TRIPLES, LENGTHEN, queueLua, TRIPLES } from "./lua";

/**
 * Lua shared by the slot scripts: `slotOf[i]` is triple i's slot index, filled by the script from
 * its ARGV (`readSlots`) before anything else runs. Declared before `queueLua({ slots: true })`,
 * whose helpers read it.
 */
const SLOTS = `-- Each triple's slot index (the triples come in the call's order).
local slotOf = {}
local function readSlots(list)
  for s in string.gmatch(list, "[^,]+") do
    slotOf[#slotOf + 1] = tonumber(s)
  end
end
`;

const SLOT_QUEUE = queueLua({ slots: true });

/**
 * Acquire one permit: place `token` on one slot, the first free one in the call's order.
 *
 * KEYS: the P slot triples in the call's order, then the call's tombstone. ARGV: token, ttl (ms),
 * fencing (always "0": permits carry no fence; not read), `eligible` (the number of leading
 * triples where the token may be placed: P for an ordinary look, 1 for a consolidating look),
 * the triples' slot indices ("2,0,1"), `prefer` (the slot the call prefers, "" for none) and
 * `preferMs` (how much longer the preference lasts, ms), then as ACQUIRE's from ARGV 4: the
 * caller's place ("" or absent: none) and optionally the rest of a registration (look, listener,
 * waitMs, handMs, roomMs, handFence), which records the call in the room when it is refused, with
 * its preference and its P (the number of triples).
 *
 * 1. The tombstone exists: the call ended (L3). Nothing is placed or registered: {3, pttl of the
 *    tombstone}.
 * 2. **Find**: when any slot (all of them, eligible or not) holds the token, lengthen it (E1),
 *    raise `^<j>`'s newest look (P2; with no `^<j>` naming the token, one no pass reaches: only
 *    an extended permit outlives its record, P4), delete the token's record: {1, j}.
 * 3. **Place**: walk the eligible triples in order; a free slot first goes to the first live
 *    waiter placed before the caller that takes it (`serve`: P1, P3), and then the walk goes on;
 *    the first free slot nobody earlier takes gets the token (`SET … PX ttl`, `^<j>`, the record
 *    deleted): {1, j}.
 * 4. **Refuse**: register the call (with a registration), and return {0, ahead, pttl₀, …,
 *    pttl_{P−1}}: the slots' PTTLs in slot order (-2 free), and `ahead` = the place of the holder
 *    this node placed on the first eligible slot when that holder comes before the caller in the
 *    queue's order (place, then token), else -1 (P4).
 *
 * A request names at most one slot, and never places the token when any slot holds it (S1).
 */
export const SEM_ACQUIRE_LUA = `-- edgelock semaphore acquire
${KEY_TRIPLES}${LENGTHEN}${TRIPLES}${SLOTS}${SLOT_QUEUE}local n, void = triples() -- the slots, in the call's order; the call's tombstone
local token = ARGV[1] -- the token to place (one per call)
local ttl = ARGV[2] -- its lease, ms
local eligible = tonumber(ARGV[4]) -- the leading triples where the token may be placed
readSlots(ARGV[5]) -- each triple's slot index
local prefer = ARGV[6] -- registered: the slot the call prefers ("" none)
local preferMs = ARGV[7] -- how much longer the preference lasts, ms
local place = ARGV[8] -- the caller's place: epoch ms of its call ("" or nil: none)
local look = ARGV[9] -- a waiting call's look number, registered while refused (nil: none)
local listener = ARGV[10] -- its instance's channel id
local waitMs = ARGV[11] -- how much longer it waits at most, ms
local handMs = ARGV[12] -- the TTL of a hand-off to it, ms
local roomMs = ARGV[13] -- keep the room at least this long, ms
local handFence = ARGV[14] -- "1": a hand-off to it issues a fence ("0" for permits)

local reg = look and {place = place, look = look, listener = listener, waitMs = waitMs,
  handMs = handMs, roomMs = roomMs, fencing = handFence, prefer = prefer, preferMs = preferMs,
  permits = n}

-- A late or re-sent look of a call that ended places and registers nothing (L3).
if discarded(void) then
  return {3, redis.call("PTTL", void)}
end
local lo, hi = clock()
local limit = nil
if place and place ~= "" then
  limit = {tonumber(place), token}
end
local function granted(i, found)
  -- The token is on slot i: it has no record any more (S1), and the room names it slot i's
  -- holder, with its place and the newest look seen (P2), where someone queues.
  if isQueue(i) and (reg or redis.call("EXISTS", roomKey(i)) == 1) then
    redis.call("HDEL", roomKey(i), token)
    local h = redis.call("HGET", roomKey(i), "^" .. slotOf[i])
    local f = h and fields(h)
    if f and f[1] == token then
      if reg and tonumber(reg.look) > tonumber(f[3]) then
        holder(i, token, f[2], reg.look, f[4])
      end
    elseif found then
      -- Found with no record naming it: only an extended permit outlives its record, and no
      -- pass may remove it (P4), however old this look is.
      holder(i, token, place or "", "${HELD_LOOK}", "")
    else
      holder(i, token, place or "", reg and reg.look or 0, "")
    end
    keepQueue(i, ttl)
  end
  return {1, slotOf[i]}
end
-- Find before placing: a re-send, or a later look of the call, finds its slot (S1).
for i = 1, n do
  if redis.call("GET", lockKey(i)) == token then
    lengthen(lockKey(i), ttl)
    return granted(i, true)
  end
end
-- Place on the first free eligible slot that no earlier live waiter takes.
for i = 1, math.min(eligible, n) do
  if redis.call("GET", lockKey(i)) == false and not serve(i, lo, token, limit, "") then
    redis.call("SET", lockKey(i), token, "PX", ttl)
    return granted(i)
  end
end
if reg then
  register(1, token, hi, reg)
end
local ahead = -1
local current = redis.call("GET", lockKey(1))
if current and isQueue(1) then
  local h = redis.call("HGET", roomKey(1), "^" .. slotOf[1])
  local f = h and fields(h)
  local at = f and f[1] == current and tonumber(f[2])
  -- Told only when that holder comes first in the queue's order: a caller told gives way (P4).
  if at and (limit == nil or at < limit[1] or (at == limit[1] and current < token)) then
    ahead = at
  end
end
local reply = {0, ahead}
for i = 1, n do
  reply[slotOf[i] + 3] = redis.call("PTTL", lockKey(i))
end
return reply
`;

/**
 * Pass (a waiting call gives up slots on this node without ending its call: the consolidation of
 * a split, docs/design/semaphore.md §3 "Splits across slots"). KEYS: the P slot triples, then the call's tombstone. ARGV: token, the
 * triples' slot indices, `keep` (the slot kept, "" for none), `preferMs`, then a registration as
 * PASS's (place, look, listener, waitMs, handMs, roomMs, handFence).
 *
 * Every slot but `keep` that holds the token, where the slot's holder record (`^<j>`) names the
 * call with a look older than this pass's `look`, is freed and served to the room's first live
 * waiter other than the call (P4 per slot: a look numbered at or after the pass keeps what it
 * placed, an extension keeps what it counted — EXTEND raises the record's look past every pass —
 * and a slot with no record of the call may be its permit); `keep` is never touched. Where the token is then on no slot, the call is registered under the
 * pass's look, preferring `keep` (when given) until `preferMs` of node time from now. After the
 * call's tombstone nothing is done. Returns {passed, slot}: passed 1 when any slot was freed, and
 * the slot the token is on here after the pass (-1 none).
 */
export const SEM_PASS_LUA = `-- edgelock semaphore pass
${KEY_TRIPLES}${TRIPLES}${SLOTS}${SLOT_QUEUE}local n, void = triples() -- the slots; the call's tombstone
local token = ARGV[1] -- the passing call's token
readSlots(ARGV[2]) -- each triple's slot index
local keep = ARGV[3] -- the slot kept, then preferred ("" none)
local preferMs = ARGV[4] -- how long the preference lasts, ms
local place = ARGV[5] -- its place: epoch ms of its call
local look = ARGV[6] -- the pass's own look number
local listener = ARGV[7] -- its instance's channel id
local waitMs = ARGV[8] -- how much longer it waits at most, ms
local handMs = ARGV[9] -- the TTL of a hand-off to it, ms
local roomMs = ARGV[10] -- keep the room at least this long, ms
local handFence = ARGV[11] -- "1": a hand-off to it issues a fence ("0" for permits)

local reg = {place = place, look = look, listener = listener, waitMs = waitMs, handMs = handMs,
  roomMs = roomMs, fencing = handFence, prefer = keep, preferMs = preferMs, permits = n}

if discarded(void) then
  return {0, -1}
end
local lo, hi = clock()
local passed, on = 0, -1
for i = 1, n do
  if redis.call("GET", lockKey(i)) == token then
    local h = isQueue(i) and redis.call("HGET", roomKey(i), "^" .. slotOf[i])
    local f = h and fields(h)
    -- Only a slot this node recorded for a look before the pass is passed (P4 per slot): the
    -- kept slot, one a look numbered at or after the pass placed or found, one an extension
    -- counted (EXTEND) and one with no record of its holder (it may be the permit) stay.
    if tostring(slotOf[i]) == keep or not (f and f[1] == token and tonumber(f[3]) < tonumber(look)) then
      on = slotOf[i]
    else
      redis.call("DEL", lockKey(i))
      unhold(i, token)
      passed = 1
      serve(i, lo, token, nil, token)
    end
  end
end
-- On no slot here: waiting again, with the preference.
if on < 0 then
  register(1, token, hi, reg)
end
return {passed, on}
`;

/**
 * Release a permit: delete `token` from every slot that holds it and hand each slot freed (or
 * found free) to the room's first live waiter that takes it (`serve`, P3 per slot; none waiting,
 * the slot stays free); the caller's record leaves the room; the call's tombstone is written with
 * `PX keepMs` (L3, for every permit: a look of the call that runs here later places nothing).
 * KEYS: all P slot triples (the slot the permit holds is not special: a late look or hand-off
 * may have left the token on another slot here), then the tombstone. ARGV: token, the triples'
 * slot indices, keepMs. Returns 1 when a slot held the token, or when a re-send finds a slot that
 * the first request handed on (`^<j>` names the holder it handed to and this token as `from`),
 * else 0. Other holders' slots are not in the way of a permit's release: never -1.
 */
export const RELEASE_SLOTS_LUA = `-- edgelock semaphore release
${KEY_TRIPLES}${TRIPLES}${SLOTS}${SLOT_QUEUE}local n, void = triples() -- the slots; the call's tombstone
local token = ARGV[1] -- the releaser's token
readSlots(ARGV[2]) -- each triple's slot index
local keepMs = ARGV[3] -- how long the call's tombstone lives, ms

local lo = clock()
local released = 0
for i = 1, n do
  local current = redis.call("GET", lockKey(i))
  local queue = isQueue(i)
  if queue then
    redis.call("HDEL", roomKey(i), token)
  end
  local from = ""
  if current == token then
    released = 1
    redis.call("DEL", lockKey(i))
    unhold(i, token)
    current = false
    from = token
  elseif current and queue then
    -- A re-send: the first request handed this slot on.
    local h = redis.call("HGET", roomKey(i), "^" .. slotOf[i])
    if h and fields(h)[1] == current and fields(h)[4] == token then
      released = 1
    end
  end
  if current == false then
    serve(i, lo, token, nil, from)
  end
end
if void then
  redis.call("SET", void, "1", "PX", keepMs)
end
return released
`;

/**
 * Discard a permit call's token (docs/design/semaphore.md §2 "Cleanup of minority slots"): the end of a call that gives up (all P triples)
 * and the trim after a grant on slot j (every triple but j's, so j is never touched: E2 for j
 * stands). Every slot given that holds the token is deleted and served to the room's first live
 * waiter; the token's record leaves the room (no hand-off reaches the call here any more); the
 * tombstone is written with `PX keepMs`, whatever the slots held (L3). KEYS: at least one slot
 * triple, then the tombstone. ARGV: token, the triples' slot indices, keepMs. Returns 1 when any
 * slot held the token, else 0.
 */
export const DISCARD_SLOTS_LUA = `-- edgelock semaphore discard
${KEY_TRIPLES}${TRIPLES}${SLOTS}${SLOT_QUEUE}local n, void = triples() -- the slots to clear; the call's tombstone
local token = ARGV[1] -- the call's token
readSlots(ARGV[2]) -- each triple's slot index
local keepMs = ARGV[3] -- how long the tombstone lives, ms

local lo = clock()
local found = 0
for i = 1, n do
  if isQueue(i) then
    redis.call("HDEL", roomKey(i), token)
  end
  if redis.call("GET", lockKey(i)) == token then
    found = 1
    redis.call("DEL", lockKey(i))
    unhold(i, token)
    serve(i, lo, token, nil, "")
  end
end
if void then
  redis.call("SET", void, "1", "PX", keepMs)
end
return found
`;

/**
 * Inspect a semaphore (read only). KEYS: slot triples (in slot order). Returns each slot's PTTL
 * in the triples' order: -2 free, -1 held without expiry (never written by edgelock).
 */
export const SEM_INSPECT_LUA = `-- edgelock semaphore inspect
${KEY_TRIPLES}local pttls = {}
for i = 1, keyCount() do
  pttls[i] = redis.call("PTTL", lockKey(i))
end
return pttls
`;
