--[[
  Marks a sale's state (one bucket's) as behind a waiting room, so its reserving script takes only
  orders with a pass; a state Redis does not have is left absent (a mark alone would make it look
  rebuilt, and the repair that rebuilds it carries the mark).

  KEYS[1] state hash   {item:<id>}:sale (or a bucket's)

  Returns 1 when the mark was added, 0 when it was there or there is no state.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
return redis.call('HSET', KEYS[1], 'room', 1)
