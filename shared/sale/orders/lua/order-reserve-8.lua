--[[
  Reserves stock for one order: checks everything before it writes anything of it. The buyer's
  and the source's rates (rates_take, from gcra.lua, included below) are part of the decision:
  every attempt past the answers that cost nothing (a replay, no sale, sold out) takes from both,
  and one that either refuses writes nothing. An item split into buckets reserves in
  the buyer's bucket; one with too few units left answers -16 without taking from the rates, and
  the caller takes units from the other buckets (shared/reservations/buckets.ts) or proves there
  are none before the buyer is told SOLD_OUT. The units the buyer's own refill moved come with
  the next attempt: it takes that move in first (take_in, from take-in.lua, included below),
  whatever it then answers, so no other buyer can take them between their arrival and this
  buyer's reservation. An item with a waiting room (field room of its sale hash; shared/sale/rooms/)
  takes only orders that bring a live pass of the buyer's, and a pass orders once; an item without
  one pays for the check with one more field of the HMGET it makes anyway.

  KEYS[1] sale hash         {item:<id>}:sale      fields stock (remaining), limit (per buyer),
                                                  buckets (how many, when split), moves,
                                                  room (1: orders need a pass)
  (an item split into buckets has these keys per bucket, each under its bucket's own tag)
  KEYS[2] buyers hash       {item:<id>}:bought    user id -> quantity reserved
  KEYS[3] idempotency key   {item:<id>}:idem:<user id>:<Idempotency-Key>
  KEYS[4] outbox hash       {item:<id>}:outbox    order id -> order record, until the writer stores it
  KEYS[5] buyer's rate      {item:<id>}:rate:buyer:<user id>
  KEYS[6] source's rate     {item:<id>}:rate:source:<address>
  KEYS[7] taken-in record   {item:<id>}:moved-in:<move id>, of the move the buyer's refill made for it
  KEYS[8] passes            {item:<id>}:passes    <user id>:<token> -> expires at, ms (touched only with a room)

  ARGV[1] user id
  ARGV[2] quantity
  ARGV[3] order id to use if a new order is made
  ARGV[4] request fingerprint (what makes a retry "the same request")
  ARGV[5] idempotency record lifetime, ms
  ARGV[6] order record (JSON) to keep in the outbox
  ARGV[7], ARGV[8]  the buyer's rate: interval, burst (ms)
  ARGV[9], ARGV[10] the source's rate: interval (0: no limit), burst (ms)
  ARGV[11] how many buckets the caller believes the item has (1: not split)
  ARGV[12] units of that move (0: none, and KEYS[7] is not touched)
  ARGV[13] the pass's token the buyer brought ('' : none)
  ARGV[14] now, ms (a pass expiring at or before it is no pass)

  Returns {order id, remaining stock, replayed (1) or new (0), still in the outbox (1) or not (0),
  the expiry (ms) of the pass used up, or 0 when none was needed (absent on a replay)}, or
    -10 no sale open for this item (a move brought is then not taken in: it stays recorded at its donor)
    -11 sold out (not enough stock for the quantity)
    -12 per-buyer limit would be exceeded
    -13 Idempotency-Key already used with a different request
    {-15, ms} a rate is spent: the ms until it allows one again
    -16 this bucket has too few units; the item's other buckets may have some
    -17 the item has another number of buckets than the caller believes
    -26 the item has a waiting room, and the buyer brought no live pass of its own
]]
--- @include "../../../limits/lua/gcra.lua"
--- @include "../../../reservations/lua/take-in.lua"
if ARGV[12] ~= '0' and take_in(KEYS[1], KEYS[7], ARGV[12]) ~= 1 then
  return -10
end

local previous = redis.call('GET', KEYS[3])
if previous then
  local fingerprint, orderId, remaining = string.match(previous, '^(.-)|(.-)|(%d+)$')
  if fingerprint ~= ARGV[4] then
    return -13
  end
  -- A replay still in the outbox is promised in MySQL before the client is told it stands.
  local pending = redis.call('HEXISTS', KEYS[4], orderId)
  if pending == 1 then
    -- A write of nothing new (its own expiry again), so that the caller's WAIT on this connection
    -- covers the reservation replayed, whichever connection made it (shared/reservations/place.ts).
    redis.call('PEXPIRE', KEYS[3], math.max(1, redis.call('PTTL', KEYS[3])))
  end
  return { orderId, tonumber(remaining), 1, pending }
end

local sale = redis.call('HMGET', KEYS[1], 'stock', 'limit', 'buckets', 'room')
if not sale[1] then
  return -10
end
if tonumber(sale[3] or '1') ~= tonumber(ARGV[11]) then
  return -17
end
local pass = false
local expires = false
if sale[4] then
  pass = ARGV[1] .. ':' .. ARGV[13]
  expires = redis.call('ZSCORE', KEYS[8], pass)
  if not expires or tonumber(expires) <= tonumber(ARGV[14]) then
    return -26
  end
end
local stock = tonumber(sale[1])
local quantity = tonumber(ARGV[2])
local limit = tonumber(sale[2])
-- Refused before any write: Redis keeps what a script wrote before an error, such as the rates'.
if not limit or not quantity or quantity < 1 then
  return redis.error_reply('ERR order-reserve-8: the sale has no per-buyer limit, or the quantity is not a count')
end
if sale[3] and stock < quantity then
  if tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0') + quantity > limit then
    return -12
  end
  return -16
end
-- The common answer once a sale is over: no writes at all.
if stock <= 0 then
  return -11
end
local wait = rates_take(KEYS[5], ARGV[7], ARGV[8], KEYS[6], ARGV[9], ARGV[10])
if wait > 0 then
  return { -15, wait }
end
-- Read, not counted and put back on a refusal: that would save this call, but a refusal would
-- then write (and replicas, the AOF and keyspace events would see it), where it writes nothing.
local bought = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if bought + quantity > limit then
  return -12
end
if stock < quantity then
  return -11
end

-- ARGV[2] as sent, not the number: Lua would format a number back into a string for Redis.
local remaining = redis.call('HINCRBY', KEYS[1], 'stock', '-' .. ARGV[2])
redis.call('HINCRBY', KEYS[2], ARGV[1], ARGV[2])
redis.call('SET', KEYS[3], ARGV[4] .. '|' .. ARGV[3] .. '|' .. remaining, 'PX', ARGV[5])
redis.call('HSET', KEYS[4], ARGV[3], ARGV[6])
if pass then
  redis.call('ZREM', KEYS[8], pass)
end
return { ARGV[3], remaining, 0, 1, pass and expires or 0 }
