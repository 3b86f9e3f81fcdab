--[[
  Reconciliation's repair of a deal's holders after Redis lost writes: a user whose stored coupon
  Redis forgot is recorded as its holder again, so they cannot be issued a second one. A holder
  Redis knows is kept.

  KEYS[1] holders hash   {deal:<id>}:holders   user id -> coupon id

  ARGV    pairs of user id and the coupon id MySQL confirmed for them

  Returns how many holders were put back.
]]
local restored = 0
for i = 1, #ARGV, 2 do
  restored = restored + redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1])
end
return restored
