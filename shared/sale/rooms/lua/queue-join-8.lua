--[[
  Puts a buyer in an item's waiting room, once: a buyer already in it gets its place again. Before
  the room opens the rank is the random one the caller drew (a shuffled pre-queue: arriving first
  gives no edge); from the opening on, by the room's clock (its record that a script saw the
  opening, its last advance, anyone admitted) and not the caller's stamp alone, the next of a
  counter above every pre-queue rank, in order of arrival. Refused at once when the item is sold out: no unit left and no pass outstanding.

  KEYS[1] room hash        {item:<id>}:room
  KEYS[2] queue            {item:<id>}:queue     user id -> rank
  KEYS[3] passes           {item:<id>}:passes    <user id>:<token> -> expires at, ms
  KEYS[4] checkpoints      {item:<id>}:turns     (not used here; every room script takes the same keys)
  KEYS[5] claims           {item:<id>}:claimed   user id -> ordinal
  KEYS[6] sale hash        {item:<id>}:sale      stock, limit (an item not split)
  KEYS[7] waiters          {item:<id>}:waiters   user id -> <joined at>, then <joined at>|<token>|<expires at>
  KEYS[8] outbox           {item:<id>}:outbox    the sale's reservations not yet written (an item not split)

  ARGV[1] now, ms
  ARGV[2] the sale: '' to read it in this slot (KEYS[6], KEYS[8]), or <units left>|<per-buyer limit>|<reservations unwritten>|<last failed hand-off, ms>
  ARGV[3] when admission holds: <most reservations unwritten>|<ms after a failed hand-off>
  ARGV[4] user id
  ARGV[5] a random rank below 2^40, drawn by the caller

  Returns {ordinal (0-based), 1 when the buyer was in already, else 0}, or
    -30 the item has no waiting room
    -11 sold out
]]
--- @include "./room-frontier.lua"
local now = tonumber(ARGV[1])
local r = room_read(KEYS[1], KEYS[2], KEYS[3], KEYS[6], KEYS[8], now, ARGV[2], ARGV[3])
if not r then
  return -30
end
local ordinal = redis.call('ZRANK', KEYS[2], ARGV[4])
if ordinal then
  return { ordinal, 1 }
end
if r.units <= 0 and r.outstanding == 0 then
  return -11
end
-- Decided by the room's clock, not the caller's alone: a join stamped before the opening but run
-- after a script saw it (the room has opened), after an advance past it, or once anyone was admitted
-- ranks after everyone, so nobody admitted or told their place is moved back.
local rank = tonumber(ARGV[5])
if r.opened or math.max(now, r.ticked) >= r.opens or r.frontier > 0 then
  rank = 1099511627776 + redis.call('HINCRBY', KEYS[1], 'seq', 1)
end
redis.call('ZADD', KEYS[2], rank, ARGV[4])
redis.call('HSET', KEYS[7], ARGV[4], now)
redis.call('HINCRBY', KEYS[1], 'joined', 1)
return { redis.call('ZRANK', KEYS[2], ARGV[4]), 0 }
