--[[
  Teaches Redis a token MySQL holds, after a poll Redis could not answer: its reader and a version
  from the clock, both expiring together. Never over a rotation's "-" (a poll that read MySQL
  before the rotation must not bring the old token back), nor over a token another poll taught.

  KEYS[1] the token's reader    {feed:<token hash>}:reader
  KEYS[2] the feed version      {feed:<token hash>}:version

  ARGV[1] user id
  ARGV[2] candidate version: the caller's clock, in microseconds since the epoch
  ARGV[3] how long Redis keeps the two, ms

  Returns { reader, version } as Redis now holds them: reader "-" for a token rotated away.
]]
local reader = redis.call('GET', KEYS[1])
local version = redis.call('GET', KEYS[2])
if reader and (reader == '-' or version) then
  return { reader, version or '0' }
end
local current = tonumber(version) or 0
local candidate = tonumber(ARGV[2])
if candidate <= current then
  candidate = current + 1
end
version = string.format('%d', candidate)
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('SET', KEYS[2], version, 'PX', ARGV[3])
return { ARGV[1], version }
