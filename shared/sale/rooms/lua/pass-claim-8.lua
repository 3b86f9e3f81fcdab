--[[
  Issues an admitted waiter its pass: the right to order the item once before it expires. Once per
  buyer: a buyer that has one gets the same again while it lives, used as it may be, and -32 once
  it has expired. Reads before it writes: a waiter whose turn has not come by the room's reading is
  refused without a write on the sale's slot; the room is advanced (room_advance) at most once a
  second, by whichever claim or status read finds it due. A waiter whose turn came more than the
  grace ago has lost its place.

  KEYS[1..8] as queue-join-8.lua

  ARGV[1] now, ms
  ARGV[2] the sale: '' to read it in this slot (KEYS[6], KEYS[8]), or <units left>|<per-buyer limit>|<reservations unwritten>|<last failed hand-off, ms>
  ARGV[3] when admission holds: <most reservations unwritten>|<ms after a failed hand-off>
  ARGV[4] user id
  ARGV[5] a new pass's token, drawn by the caller
  ARGV[6] ms since the last advance below which this claim does not advance the room

  Returns {token, expires at, ordinal, 1 when issued before, else 0, places lost, passes expired,
  ordinals admitted by this call, ms the waiter waited from joining}, or
    -30 the item has no waiting room
    -29 the buyer is not in it
    -27 the buyer's turn has not come
    -28 the buyer's turn came and went: its place is lost
    -32 the buyer's pass has expired
]]
--- @include "./room-frontier.lua"
local now = tonumber(ARGV[1])
local r = room_read(KEYS[1], KEYS[2], KEYS[3], KEYS[6], KEYS[8], now, ARGV[2], ARGV[3])
if not r then
  return -30
end
local ordinal = redis.call('ZRANK', KEYS[2], ARGV[4])
if not ordinal then
  return -29
end
local joined = redis.call('HGET', KEYS[7], ARGV[4]) or ARGV[1]
local token, expires = string.match(joined, '^%d+|([^|]+)|(%d+)$')
if token then
  if tonumber(expires) <= now then
    return -32
  end
  return { token, tonumber(expires), ordinal, 1, 0, 0, 0, 0 }
end
if ordinal >= r.admitted then
  return -27
end
local before = r.frontier
local lost, expired = 0, 0
if now - r.ticked >= tonumber(ARGV[6]) then
  lost, expired = room_advance(r, KEYS[4], KEYS[5], KEYS[1], KEYS[3], now)
end
if ordinal < r.swept then
  return -28
end
local first = redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. ordinal, '+inf', 'LIMIT', 0, 1)
if #first > 0 and tonumber(string.match(first[1], '|(%d+)$')) + r.grace < now then
  return -28
end
local expires = now + r.pass
redis.call('ZADD', KEYS[3], expires, ARGV[4] .. ':' .. ARGV[5])
redis.call('HSET', KEYS[7], ARGV[4], joined .. '|' .. ARGV[5] .. '|' .. expires)
redis.call('ZADD', KEYS[5], ordinal, ARGV[4])
redis.call('HINCRBY', KEYS[1], 'issued', 1)
return { ARGV[5], expires, ordinal, 0, lost, expired, r.frontier - before, now - tonumber(joined) }
