--[[
  Gives back a coupon the reservation ledger (MySQL) has cancelled: its hand-off failed. The
  coupon goes back to the pool and the user may ask again. Idempotent: a release that already ran
  answers as it did, however often ioredis sends it again, and one whose issue Redis lost gives
  nothing back.

  KEYS[1] deal hash      {deal:<id>}:deal
  KEYS[2] holders hash   {deal:<id>}:holders
  KEYS[3] outbox hash    {deal:<id>}:outbox
  KEYS[4] release record {deal:<id>}:released:<coupon id>   kept a day

  ARGV[1] coupon id
  ARGV[2] user id

  Returns 1 when released (now or by an earlier run), 0 when Redis holds nothing of it to give back.
]]
if redis.call('EXISTS', KEYS[4]) == 1 then
  return 1
end
if redis.call('HDEL', KEYS[3], ARGV[1]) == 0 then
  return 0
end
redis.call('HINCRBY', KEYS[1], 'issued', -1)
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('SET', KEYS[4], '1', 'EX', 86400)
return 1
