--[[
  A poll of a reader's feed that is not answered 304 by one read (feed-access.ts, knownFeedReader),
  and an issue page, in one round trip: whose token this is, the reader's feed version (the ETag),
  and one request taken from the token's rate. Only a token Redis knows takes from a rate, so polls
  with made-up tokens create no keys. The rate is gcra.lua's (included below).

  KEYS[1] the token's reader    {feed:<token hash>}:reader    user id, or "-" once the token was rotated away
  KEYS[2] the feed version      {feed:<token hash>}:version
  KEYS[3] the token's rate      {feed:<token hash>}:rate      (TAT, ms)

  ARGV[1] rate interval, ms
  ARGV[2] rate burst, ms

  Returns { 0 } when Redis does not know the token (the caller asks MySQL), { 1 } when it was
  rotated away, { -15 RateLimited, ms until a poll is allowed }, or { 2, user id, version }.
]]
--- @include "../../limits/lua/gcra.lua"
-- One read of the three: each call from Lua costs Redis more than the command it runs.
local stored = redis.call('MGET', KEYS[1], KEYS[2], KEYS[3])
local reader, version = stored[1], stored[2]
if not reader then
  return { 0 }
end
if reader == '-' then
  return { 1 }
end
if not version then
  return { 0 }
end
local wait = rate_take(KEYS[3], stored[3], ARGV[1], ARGV[2])
if wait > 0 then
  return { -15, wait }
end
return { 2, reader, version }
