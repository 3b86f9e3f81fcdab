--[[
  Opens (or re-opens before any order) an item's sale with its stock and per-buyer limit; for an
  item split into buckets, one bucket of it with its share of the stock.

  KEYS[1] sale hash     {item:<id>}:sale
  KEYS[2] buyers hash   {item:<id>}:bought
  KEYS[3] outbox hash   {item:<id>}:outbox

  ARGV[1] stock
  ARGV[2] per-buyer limit
  ARGV[3] how many buckets the item is split into (1: not split)

  Returns 1, or
    -14 the sale already has reservations; its stock can no longer be reset
]]
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then
  return -14
end
redis.call('HSET', KEYS[1], 'stock', ARGV[1], 'limit', ARGV[2])
if tonumber(ARGV[3]) > 1 then
  redis.call('HSET', KEYS[1], 'buckets', ARGV[3])
else
  redis.call('HDEL', KEYS[1], 'buckets')
end
return 1
