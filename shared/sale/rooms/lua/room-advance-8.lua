--[[
  Moves an item's waiting room on to now (room_advance in room-frontier.lua): the places lost
  counted, expired passes dropped, the frontier stored with a checkpoint. Status reads call it at
  most once a second per room (the `ticked` time), so a crowd's polls cost reads only.

  KEYS[1..8] as queue-join-8.lua

  ARGV[1] now, ms
  ARGV[2] the sale: '' to read it in this slot (KEYS[6], KEYS[8]), or <units left>|<per-buyer limit>|<reservations unwritten>|<last failed hand-off, ms>
  ARGV[3] when admission holds: <most reservations unwritten>|<ms after a failed hand-off>
  ARGV[4] ms since the last advance below which this one does nothing

  Returns {places lost, passes expired, ordinals admitted, by this call; waiters not yet admitted;
  ms the first of them has waited (0: none)}, or
    -30 the item has no waiting room
]]
--- @include "./room-frontier.lua"
local now = tonumber(ARGV[1])
local r = room_read(KEYS[1], KEYS[2], KEYS[3], KEYS[6], KEYS[8], now, ARGV[2], ARGV[3])
if not r then
  return -30
end
if now - tonumber(redis.call('HGET', KEYS[1], 'ticked') or '0') < tonumber(ARGV[4]) then
  return { 0, 0, 0, r.queued - r.admitted, 0 }
end
local before = r.frontier
local lost, expired = room_advance(r, KEYS[4], KEYS[5], KEYS[1], KEYS[3], now)
local oldest = 0
local head = redis.call('ZRANGE', KEYS[2], r.frontier, r.frontier)
if #head > 0 then
  oldest = now - math.min(tonumber(string.match(redis.call('HGET', KEYS[7], head[1]) or '', '^%d+') or now), now)
end
return { lost, expired, r.frontier - before, r.queued - r.frontier, oldest }
