--[[
  Counts a wrong password for an address from one source. Every `threshold` failures lock the
  pair out, each lockout twice as long as the one before (up to a ceiling), so guessing slows
  down exponentially while the same address signs in freely from anywhere else.

  KEYS[1] lockout hash   {ip:<address>}:signin:<email hash>   fields failures, until (ms), level

  ARGV[1] failures before a lockout
  ARGV[2] the first lockout, ms
  ARGV[3] the longest lockout, ms
  ARGV[4] how long failures are remembered without a lockout, ms

  Returns the lockout it started, ms, or 0.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
local lockout = 0
if failures >= tonumber(ARGV[1]) then
  local level = redis.call('HINCRBY', KEYS[1], 'level', 1)
  lockout = math.min(tonumber(ARGV[2]) * 2 ^ (level - 1), tonumber(ARGV[3]))
  redis.call('HSET', KEYS[1], 'failures', 0, 'until', now + lockout)
end
-- The level outlives a lockout, so the next one is longer, until the pair stays quiet a while.
redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[4]), lockout) + tonumber(ARGV[3]))
return lockout
