--[[
  Reconciliation's repair of a drifted stock counter: compare-and-set, so a reservation made
  between the measurement and the repair is never overwritten.

  KEYS[1] sale hash   {item:<id>}:sale

  ARGV[1] the stock value reconciliation measured
  ARGV[2] the stock value it should be

  Returns 1 when set, 0 when the counter moved since it was measured.
]]
if redis.call('HGET', KEYS[1], 'stock') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'stock', ARGV[2])
return 1
