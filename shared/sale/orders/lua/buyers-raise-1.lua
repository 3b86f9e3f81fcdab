--[[
  Reconciliation's repair of buyers' counts after Redis lost writes: each count is raised to at
  least the buyer's confirmed orders in MySQL, never lowered, so a reservation made meanwhile
  (already counted) is never undone and no buyer gets past the per-user limit again.

  KEYS[1] buyers hash   {item:<id>}:bought   user id -> quantity reserved

  ARGV    pairs of user id and the quantity confirmed for that buyer

  Returns how many counts were raised.
]]
local raised = 0
for i = 1, #ARGV, 2 do
  local current = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
  if current < tonumber(ARGV[i + 1]) then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    raised = raised + 1
  end
end
return raised
