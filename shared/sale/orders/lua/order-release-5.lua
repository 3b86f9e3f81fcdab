--[[
  Gives back an order MySQL has recorded as cancelled (its row's status): its hand-off failed. Puts the
  stock and the buyer's count back and forgets the idempotency record, so the client may retry
  with the same key. Idempotent: a release that already ran answers as it did (ioredis sends a
  command again after a reconnect when its reply was lost), and one whose reservation Redis lost
  gives nothing back.

  KEYS[1] sale hash         {item:<id>}:sale
  KEYS[2] buyers hash       {item:<id>}:bought
  KEYS[3] idempotency key   {item:<id>}:idem:<user id>:<Idempotency-Key>
  KEYS[4] outbox hash       {item:<id>}:outbox
  KEYS[5] release record    {item:<id>}:released:<order id>   kept a day

  ARGV[1] order id
  ARGV[2] user id
  ARGV[3] quantity

  Returns 1 when released (now or by an earlier run), 0 when Redis holds nothing of it to give back.
]]
if redis.call('EXISTS', KEYS[5]) == 1 then
  return 1
end
if redis.call('HDEL', KEYS[4], ARGV[1]) == 0 then
  return 0
end
local quantity = tonumber(ARGV[3])
redis.call('HINCRBY', KEYS[1], 'stock', quantity)
if redis.call('HINCRBY', KEYS[2], ARGV[2], -quantity) <= 0 then
  redis.call('HDEL', KEYS[2], ARGV[2])
end
redis.call('DEL', KEYS[3])
redis.call('SET', KEYS[5], '1', 'EX', 86400)
return 1
