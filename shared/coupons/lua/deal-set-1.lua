--[[
  Creates or updates a deal's live state; the issued count is kept.

  KEYS[1] deal hash   {deal:<id>}:deal

  ARGV[1] opens at, ms
  ARGV[2] closes at, ms
  ARGV[3] limit

  Returns 1, or
    -25 the new limit is below the coupons already issued
]]
if tonumber(redis.call('HGET', KEYS[1], 'issued') or '0') > tonumber(ARGV[3]) then
  return -25
end
redis.call('HSET', KEYS[1], 'opens', ARGV[1], 'closes', ARGV[2], 'limit', ARGV[3])
redis.call('HSETNX', KEYS[1], 'issued', 0)
return 1
