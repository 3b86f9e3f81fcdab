--[[
  Sets an item's waiting room, or changes it while it runs: pause, resume, a new rate. The
  served count is rebased at `now` (base = what was served by now, anchor = now), so a pause
  freezes it and a new rate counts from now on; nobody admitted is ever taken back. The opening
  time may change only before the room opens.

  KEYS[1] room hash   {item:<id>}:room

  ARGV[1] now, ms
  ARGV[2] opens at, ms
  ARGV[3] admitted per second
  ARGV[4] a pass's lifetime, ms
  ARGV[5] grace, ms: how long after its turn a waiter may still claim its pass
  ARGV[6] paused (1) or not (0)
  ARGV[7] status reads per second the room's refresh intervals aim at

  Returns 1, or
    -31 the room has opened, and its opening time cannot change
]]
local now, opens = tonumber(ARGV[1]), tonumber(ARGV[2])
local f = redis.call('HMGET', KEYS[1], 'opens', 'rate', 'base', 'anchor', 'paused')
local base, anchor = 0, opens
if f[1] then
  local was = tonumber(f[1])
  if now >= was then
    if opens ~= was then
      return -31
    end
    base = tonumber(f[3] or '0')
    if f[5] ~= '1' then
      base = base + math.floor((now - math.max(tonumber(f[4] or f[1]), was)) * tonumber(f[2]) / 1000)
    end
    anchor = now
  end
end
redis.call('HSET', KEYS[1], 'opens', opens, 'rate', ARGV[3], 'pass', ARGV[4], 'grace', ARGV[5], 'paused', ARGV[6], 'budget', ARGV[7], 'base', base, 'anchor', anchor)
return 1
