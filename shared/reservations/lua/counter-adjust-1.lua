--[[
  Repairs a drifted counter by the drift reconciliation measured, relative to its current value,
  so reservations made since the look are kept. Compare-and-set on the state's repair count: of
  two repairs working from the same look, only one applies.

  KEYS[1] state hash   {<owner>}:sale or {<owner>}:deal

  ARGV[1] the counter's field (stock, issued)
  ARGV[2] the change to make
  ARGV[3] the repair count reconciliation saw
  ARGV[4] the lowest value the counter may take
  ARGV[5] the highest value the counter may take

  Returns the counter's new value, or false when the state is gone or was repaired since the look.
]]
if redis.call('EXISTS', KEYS[1]) == 0 or tonumber(redis.call('HGET', KEYS[1], 'repairs') or '0') ~= tonumber(ARGV[3]) then
  return false
end
local value = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') + tonumber(ARGV[2])
value = math.max(tonumber(ARGV[4]), math.min(tonumber(ARGV[5]), value))
redis.call('HSET', KEYS[1], ARGV[1], value)
redis.call('HINCRBY', KEYS[1], 'repairs', 1)
return value
