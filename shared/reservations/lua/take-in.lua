--[[
  A move's second step (see move-out-2.lua), included by every script that takes a move in
  (`--- @include "<path>/take-in.lua"`): move-in-2.lua, and a reserving script that takes in the move its
  buyer's refill made for it in the same script that reserves, so no one can take those units
  first. The recipient takes the move in once, however many times this runs (the process that
  started the move, a buyer that found it in flight, a repair); after it the move's record at the
  donor is only cleared.

  take_in(state, moved_in, units): state is the recipient's state hash (fields stock, moves),
  moved_in its taken-in record of the move ({<bucket>}:moved-in:<move id>, kept a day). Returns 1
  when taken in (now or before), or -18 when the recipient has no state (the move stays recorded
  at the donor, for repair once the state is rebuilt).
]]
local function take_in(state, moved_in, units)
  if redis.call('EXISTS', moved_in) == 1 then
    return 1
  end
  if redis.call('EXISTS', state) == 0 then
    return -18
  end
  redis.call('HINCRBY', state, 'stock', tonumber(units))
  redis.call('HINCRBY', state, 'moves', 1)
  redis.call('SET', moved_in, '1', 'EX', 86400)
  return 1
end
