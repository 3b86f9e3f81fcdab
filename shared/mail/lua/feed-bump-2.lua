--[[
  Moves a reader's feeds to a new version after a change (an issue filed, a newsletter renamed,
  muted or unmuted): greater than any it has had, from the caller's clock unless the stored version
  is already past it. Only a token Redis knows is bumped: one it has forgotten gets a new version
  from the clock when next polled, which is after the change.

  KEYS[1] the token's reader    {feed:<token hash>}:reader
  KEYS[2] the feed version      {feed:<token hash>}:version

  ARGV[1] candidate version: the caller's clock, in microseconds since the epoch

  Returns the new version as a string, or 0 when there was nothing to bump.
]]
local reader = redis.call('GET', KEYS[1])
if not reader or reader == '-' then
  return 0
end
local current = tonumber(redis.call('GET', KEYS[2])) or 0
local candidate = tonumber(ARGV[1])
local version = current + 1
if candidate > current then
  version = candidate
end
-- %d: Lua would print a number this large in exponent form.
local text = string.format('%d', version)
redis.call('SET', KEYS[2], text, 'KEEPTTL')
return text
