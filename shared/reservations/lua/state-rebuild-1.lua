--[[
  Brings back an owner's state that Redis lost whole (a flush, a node replaced without its data),
  from what MySQL holds. Only where there is none: a state that came back meanwhile is kept.

  KEYS[1] state hash   {<owner>}:sale or {<owner>}:deal

  ARGV    field/value pairs

  Returns 1 when rebuilt, 0 when a state was already there.
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
