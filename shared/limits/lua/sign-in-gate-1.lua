--[[
  Decides whether a sign-in for an address may even be tried from a source, before the user is
  looked up or a password hashed: not while the pair is locked out. Every attempt admitted counts
  against the pair until one succeeds (which deletes the pair's key), so attempts in flight at
  once cannot slip past the threshold: the one that reaches it starts a lockout, each twice as
  long as the one before (up to a ceiling), so guessing slows down exponentially while the same
  address signs in freely from anywhere else. (The source's own rate is rate-take-1.lua's.)

  KEYS[1] the pair's hash   {ip:<address>}:signin:<email hash>   fields attempts, until (ms), level

  ARGV[1] attempts without a success before a lockout
  ARGV[2] the first lockout, ms
  ARGV[3] the longest lockout, ms
  ARGV[4] how long attempts are remembered without a lockout, ms

  Returns 0 when the attempt may go ahead, or the ms until one may.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local locked = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if locked > now then
  return locked - now
end
if redis.call('HINCRBY', KEYS[1], 'attempts', 1) >= tonumber(ARGV[1]) then
  local level = redis.call('HINCRBY', KEYS[1], 'level', 1)
  local lockout = math.min(tonumber(ARGV[2]) * 2 ^ (level - 1), tonumber(ARGV[3]))
  redis.call('HSET', KEYS[1], 'attempts', 0, 'until', now + lockout)
  redis.call('PEXPIRE', KEYS[1], lockout + tonumber(ARGV[3]))
else
  -- The level outlives a lockout, so the next one is longer, until the pair stays quiet a while.
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) + tonumber(ARGV[3]))
end
return 0
