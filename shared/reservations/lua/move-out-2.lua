--[[
  The first step of a move between two buckets of one owner split over several hash slots: the
  donor gives up to the units asked, or half of what it has when that is more, into a move
  recorded here until the recipient has taken it in (move-in-2.lua) and the move is cleared. The
  units stay counted while they travel: reconciliation and a buyer told SOLD_OUT count the moves.

  KEYS[1] donor's state hash   {<bucket>}:sale                fields stock, moves (steps taken here)
  KEYS[2] donor's moves        {<bucket>}:moves               move id -> "<recipient bucket>|<units>|<ms>"

  ARGV[1] move id
  ARGV[2] recipient bucket (its index)
  ARGV[3] units the recipient needs
  ARGV[4] now, ms

  Returns {units moved (0 when the donor has none), the donor's moves count, the moves still
  recorded here as id/record pairs}, or -18 when the donor has no state.
]]
local state = redis.call('HMGET', KEYS[1], 'stock', 'moves')
if not state[1] then
  return -18
end
local stock = tonumber(state[1])
local units = math.min(stock, math.max(tonumber(ARGV[3]), math.ceil(stock / 2)))
if units <= 0 then
  return { 0, tonumber(state[2] or '0'), redis.call('HGETALL', KEYS[2]) }
end
redis.call('HINCRBY', KEYS[1], 'stock', -units)
local moves = redis.call('HINCRBY', KEYS[1], 'moves', 1)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. '|' .. units .. '|' .. ARGV[4])
return { units, moves, {} }
