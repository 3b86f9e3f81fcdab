--[[
  Compensates an issue whose hand-off to the queue failed: the coupon goes back to the pool and
  the user may ask again. Refuses once the coupon is claimed: the writer has it, or a repeat
  request was already told the user holds it (then the outbox relay delivers it). Idempotent: a
  release that already ran answers as it did, however often ioredis sends it again.

  KEYS[1] deal hash      {deal:<id>}:deal
  KEYS[2] holders hash   {deal:<id>}:holders
  KEYS[3] outbox hash    {deal:<id>}:outbox
  KEYS[4] claimed set    {deal:<id>}:claimed
  KEYS[5] release record {deal:<id>}:released:<coupon id>   kept a day

  ARGV[1] coupon id
  ARGV[2] user id

  Returns 1 when released (now or by an earlier run), 0 when claimed by the writer or no longer pending.
]]
if redis.call('EXISTS', KEYS[5]) == 1 then
  return 1
end
if redis.call('SISMEMBER', KEYS[4], ARGV[1]) == 1 then
  return 0
end
if redis.call('HDEL', KEYS[3], ARGV[1]) == 0 then
  return 0
end
redis.call('HINCRBY', KEYS[1], 'issued', -1)
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('SET', KEYS[5], '1', 'EX', 86400)
return 1
