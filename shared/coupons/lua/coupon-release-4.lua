--[[
  Compensates an issue whose hand-off to the queue failed: the coupon goes back to the pool and
  the user may ask again. Refuses once the coupon is claimed: the writer has it, or a repeat
  request was already told the user holds it (then the outbox relay delivers it).

  KEYS[1] deal hash      {deal:<id>}:deal
  KEYS[2] holders hash   {deal:<id>}:holders
  KEYS[3] outbox hash    {deal:<id>}:outbox
  KEYS[4] claimed set    {deal:<id>}:claimed

  ARGV[1] coupon id
  ARGV[2] user id

  Returns 1 when released, 0 when claimed by the writer or no longer pending.
]]
if redis.call('SISMEMBER', KEYS[4], ARGV[1]) == 1 then
  return 0
end
if redis.call('HDEL', KEYS[3], ARGV[1]) == 0 then
  return 0
end
redis.call('HINCRBY', KEYS[1], 'issued', -1)
redis.call('HDEL', KEYS[2], ARGV[2])
return 1
