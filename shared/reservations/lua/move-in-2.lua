--[[
  The second step of a move between buckets (see move-out-2.lua): the recipient takes the units
  in, once, however many times the step runs (the process that started the move, a buyer that
  found it in flight, a repair). After it the move's record at the donor is only cleared.

  KEYS[1] recipient's state hash   {<bucket>}:sale                  fields stock, moves
  KEYS[2] taken-in record          {<bucket>}:moved-in:<move id>    kept a day

  ARGV[1] units

  Returns 1 when taken in (now or before), or -10 when the recipient has no state (the move stays
  recorded at the donor, for repair once the state is rebuilt).
]]
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 1
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -10
end
redis.call('HINCRBY', KEYS[1], 'stock', tonumber(ARGV[1]))
redis.call('HINCRBY', KEYS[1], 'moves', 1)
redis.call('SET', KEYS[2], '1', 'EX', 86400)
return 1
