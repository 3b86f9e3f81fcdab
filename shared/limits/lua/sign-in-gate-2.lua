--[[
  Decides whether a sign-in may even be tried, before the user is looked up or a password hashed:
  not while this address is locked out from this source, and not past the source's own rate.
  Both keys carry the source's hash tag, so they share one slot.

  KEYS[1] lockout hash   {ip:<address>}:signin:<email hash>   fields failures, until (ms), level
  KEYS[2] source's rate  {ip:<address>}:signin                the TAT of the source's attempts, ms

  ARGV[1] the source's interval, ms (0: the source has no rate, a load-test allowance)
  ARGV[2] the source's burst, ms

  Returns 0 when the attempt may go ahead, or the ms until one may.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local locked = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if locked > now then
  return locked - now
end
local interval = tonumber(ARGV[1])
if interval == 0 then
  return 0
end
local burst = tonumber(ARGV[2])
local tat = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), now)
if tat - now > burst then
  return tat - now - burst
end
redis.call('SET', KEYS[2], tat + interval, 'PX', tat + interval - now)
return 0
