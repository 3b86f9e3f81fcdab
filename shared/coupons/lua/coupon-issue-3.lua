--[[
  Issues one coupon of a time deal: checks everything before it writes anything.

  KEYS[1] deal hash      {deal:<id>}:deal      fields opens, closes (ms), limit, issued
  KEYS[2] holders hash   {deal:<id>}:holders   user id -> coupon id
  KEYS[3] outbox hash    {deal:<id>}:outbox    coupon id -> record, until the writer stores it

  ARGV[1] user id
  ARGV[2] coupon id to use if one is issued
  ARGV[3] now, ms — the server's clock, from one place, never the client's
  ARGV[4] coupon record (JSON) to keep in the outbox

  Returns {coupon id, issued count}, or
    -20 no such deal
    -21 not open yet
    -22 closed
    {coupon id, -23, 1 still in the outbox or 0} the user already holds this coupon (the same
      id again, never a second)
    -24 sold out: the limit is reached
]]
local deal = redis.call('HMGET', KEYS[1], 'opens', 'closes', 'limit', 'issued')
if not deal[1] then
  return -20
end
local now = tonumber(ARGV[3])
if now < tonumber(deal[1]) then
  return -21
end
if now >= tonumber(deal[2]) then
  return -22
end
local held = redis.call('HGET', KEYS[2], ARGV[1])
if held then
  -- The answer names the coupon: one still in the outbox is promised in the ledger first.
  return { held, -23, redis.call('HEXISTS', KEYS[3], held) }
end
if tonumber(deal[4] or '0') >= tonumber(deal[3]) then
  return -24
end
local issued = redis.call('HINCRBY', KEYS[1], 'issued', 1)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
return { ARGV[2], issued }
