--[[
  Repairs a lost bump: versions only rise, so a stored version below one a caller has seen means
  Redis lost the bump that made it (a failover under asynchronous replication, a restart from an
  older file) and holds the entries from before it. Raises the version past the one seen, unless
  another caller already has: however many see the loss at once, the key space moves once.

  KEYS[1] version key

  ARGV[1] the version the caller saw, which Redis no longer holds
  ARGV[2] candidate version: the caller's clock, in microseconds since the epoch

  Returns the version now stored, as a string.
]]
local current = tonumber(redis.call('GET', KEYS[1])) or 0
local seen = tonumber(ARGV[1])
if current >= seen then
  return string.format('%d', current)
end
local version = math.max(tonumber(ARGV[2]), seen + 1)
-- %d: Lua would print a number this large in exponent form.
local text = string.format('%d', version)
redis.call('SET', KEYS[1], text)
return text
