--[[
  One waiter's place in an item's waiting room, read: everything the caller needs to say
  where the waiter stands, admitted or not, the odds and when to ask again (shared/sale/rooms/rooms.ts
  does that arithmetic). Writes nothing, but the room's record that it has opened, once (room-frontier.lua).

  KEYS[1..8] as queue-join-8.lua

  ARGV[1] now, ms
  ARGV[2] the sale: '' to read it in this slot (KEYS[6], KEYS[8]), or <units left>|<per-buyer limit>|<reservations unwritten>|<last failed hand-off, ms>
  ARGV[3] when admission holds: <most reservations unwritten>|<ms after a failed hand-off>
  ARGV[4] user id

  Returns (the rate as a string: Redis would cut a fractional number to an integer)
  {ordinal, frontier, served, cap, passes outstanding, units left, queue length, issued,
  lost, expired, rate, paused (1/0), opens, grace, pass lifetime, turn (the checkpoint time of the
  waiter's turn, negative when not stamped yet), swept, the buyer's record (<joined at>[|<token>|<expires at>]),
  their pass live (1/0), ticked, budget, per-buyer limit, joined, admission held (1/0)}, or
    -30 the item has no waiting room
    -29 the buyer is not in it
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
local turn = -1
if ordinal < r.admitted then
  local first = redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. ordinal, '+inf', 'LIMIT', 0, 1)
  if #first > 0 then
    turn = tonumber(string.match(first[1], '|(%d+)$'))
  end
end
local record = redis.call('HGET', KEYS[7], ARGV[4]) or ''
local token = string.match(record, '^%d+|([^|]+)|')
local live = 0
if token then
  local expires = redis.call('ZSCORE', KEYS[3], ARGV[4] .. ':' .. token)
  if expires and tonumber(expires) > now then
    live = 1
  end
end
local ticked = tonumber(redis.call('HGET', KEYS[1], 'ticked') or '0')
return { ordinal, r.admitted, r.served, r.cap, r.outstanding, r.units, r.queued, r.issued, r.lost, r.expired, tostring(r.rate), r.paused and 1 or 0, r.opens, r.grace, r.pass, turn, r.swept, record, live, ticked, r.budget, r.limit, r.joined, r.held and 1 or 0 }
