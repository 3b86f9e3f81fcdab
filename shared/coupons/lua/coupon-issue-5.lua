--[[
  Issues one coupon of a time deal: checks everything before it writes anything. The user's and
  the source's rates (rates_take, from gcra.lua, included below) are part of the
  decision: every ask of an open deal takes from both, but for the answers that cost nothing (sold
  out to a user who holds none), and one that either refuses writes nothing.

  KEYS[1] deal hash      {deal:<id>}:deal      fields opens, closes (ms), limit, issued
  KEYS[2] holders hash   {deal:<id>}:holders   user id -> coupon id
  KEYS[3] outbox hash    {deal:<id>}:outbox    coupon id -> record, until the writer stores it
  KEYS[4] user's rate    {deal:<id>}:rate:buyer:<user id>
  KEYS[5] source's rate  {deal:<id>}:rate:source:<address>

  ARGV[1] user id
  ARGV[2] coupon id to use if one is issued
  ARGV[3] now, ms — the server's clock, from one place, never the client's
  ARGV[4] coupon record (JSON) to keep in the outbox
  ARGV[5], ARGV[6] the user's rate: interval, burst (ms)
  ARGV[7], ARGV[8] the source's rate: interval (0: no limit), burst (ms)

  Returns {coupon id, issued count}, or
    -20 no such deal
    -21 not open yet
    -22 closed
    {coupon id, -23, 1 still in the outbox or 0} the user already holds this coupon (the same
      id again, never a second)
    -24 sold out: the limit is reached
    {-15, ms} a rate is spent: the ms until it allows one again
]]
--- @include "../../limits/lua/gcra.lua"
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
local sold_out = tonumber(deal[4] or '0') >= tonumber(deal[3])
-- The common answer once a deal is over: no writes at all.
if sold_out and not held then
  return -24
end
local wait = rates_take(KEYS[4], ARGV[5], ARGV[6], KEYS[5], ARGV[7], ARGV[8])
if wait > 0 then
  return { -15, wait }
end
if held then
  -- The answer names the coupon: one still in the outbox is promised in the ledger first.
  local pending = redis.call('HEXISTS', KEYS[3], held)
  if pending == 1 then
    -- A write of nothing new (the holder again), so that the caller's WAIT on this connection covers
    -- the coupon replayed, whichever connection issued it (shared/reservations/place.ts): the rates
    -- above write nothing for a source exempt from them.
    redis.call('HSET', KEYS[2], ARGV[1], held)
  end
  return { held, -23, pending }
end
local issued = redis.call('HINCRBY', KEYS[1], 'issued', 1)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
return { ARGV[2], issued }
