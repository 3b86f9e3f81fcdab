--[[
  Moves a key space to a new version, greater than any it has had: the caller's clock-based
  candidate unless the stored version is already past it, then one more. Numeric, so an instance
  still on INCR during a deploy can bump it too; clock-based, so a version Redis lost with its data
  (a failover under asynchronous replication, a flush) is never handed out again.

  KEYS[1] version key

  ARGV[1] candidate version: the caller's clock, in microseconds since the epoch

  Returns the new version, as a string.
]]
local current = tonumber(redis.call('GET', KEYS[1])) or 0
local candidate = tonumber(ARGV[1])
local version = current + 1
if candidate > current then
  version = candidate
end
-- %d: Lua would print a number this large in exponent form.
local text = string.format('%d', version)
redis.call('SET', KEYS[1], text)
return text
