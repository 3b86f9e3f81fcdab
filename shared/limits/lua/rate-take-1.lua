--[[
  One request against a rate limit, by the generic cell rate algorithm (GCRA): a request is
  allowed when the key's theoretical arrival time (TAT) is at most `burst` ahead of now, and then
  moves the TAT on by one interval. Redis's clock, so every instance sees the same time.

  KEYS[1] the limit's key, e.g. {ip:<address>}:signup   holds the TAT, ms

  ARGV[1] interval, ms: the period divided by the requests it allows
  ARGV[2] burst, ms: how far ahead of now the TAT may run (interval × (burst size − 1))

  Returns 0 when allowed, or the ms until a request would be.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
if tat - now > burst then
  return tat - now - burst
end
redis.call('SET', KEYS[1], tat + interval, 'PX', tat + interval - now)
return 0
