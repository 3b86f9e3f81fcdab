--[[
  Stamps an owner's state hash (a sale's or a deal's) with the time of a hand-off that failed and
  was compensated (the client told 503): a waiting room in front of the sale holds its admission
  for a moment after it (shared/sale/rooms/lua/room-frontier.lua), so no more buyers are let into a
  checkout whose queue is failing. A state hash Redis no longer holds is left absent: a hash with
  only this field would look like a sale to the scripts that read it.

  KEYS[1] state hash   {item:<id>}:sale (or a bucket's), {deal:<id>}:state

  ARGV[1] now, ms

  Returns 1 when stamped, 0 when the state hash is absent.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], 'handOffFailedAt', ARGV[1])
return 1
