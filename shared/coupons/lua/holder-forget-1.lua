--[[
  The database guard rejected coupons (Redis had issued more than the deal has, after losing
  writes): their users hold nothing, so they must not be held to them. A holder whose coupon
  is another one is kept.

  KEYS[1] holders hash   {deal:<id>}:holders   user id -> coupon id

  ARGV    pairs of user id and the coupon id the guard rejected

  Returns how many holders were forgotten.
]]
local forgotten = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    forgotten = forgotten + redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return forgotten
