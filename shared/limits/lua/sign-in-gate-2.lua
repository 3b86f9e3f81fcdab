--[[
  Decides whether a sign-in may even be tried, before the user is looked up or a password hashed:
  not while this address is locked out from this source, and not past the source's own rate.
  Every attempt admitted counts against the pair until one succeeds (which deletes the pair's
  key), so attempts in flight at once cannot slip past the threshold: the one that reaches it
  starts a lockout, each twice as long as the one before (up to a ceiling), so guessing slows
  down exponentially while the same address signs in freely from anywhere else. Both keys carry
  the source's hash tag, so they share one slot.

  KEYS[1] the pair's hash   {ip:<address>}:signin:<email hash>   fields attempts, until (ms), level
  KEYS[2] source's rate     {ip:<address>}:signin                the TAT of the source's attempts, ms

  ARGV[1] the source's interval, ms (0: no rate for this source, a load-test allowance)
  ARGV[2] the source's burst, ms
  ARGV[3] attempts without a success before a lockout
  ARGV[4] the first lockout, ms
  ARGV[5] the longest lockout, ms
  ARGV[6] how long attempts are remembered without a lockout, ms

  Returns 0 when the attempt may go ahead, or the ms until one may.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local locked = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if locked > now then
  return locked - now
end
local interval = tonumber(ARGV[1])
if interval > 0 then
  local burst = tonumber(ARGV[2])
  local tat = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), now)
  if tat - now > burst then
    return tat - now - burst
  end
  redis.call('SET', KEYS[2], tat + interval, 'PX', tat + interval - now)
end
local lockout = 0
if redis.call('HINCRBY', KEYS[1], 'attempts', 1) >= tonumber(ARGV[3]) then
  local level = redis.call('HINCRBY', KEYS[1], 'level', 1)
  lockout = math.min(tonumber(ARGV[4]) * 2 ^ (level - 1), tonumber(ARGV[5]))
  redis.call('HSET', KEYS[1], 'attempts', 0, 'until', now + lockout)
end
-- The level outlives a lockout, so the next one is longer, until the pair stays quiet a while.
redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[6]), lockout) + tonumber(ARGV[5]))
return 0
