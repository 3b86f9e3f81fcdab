--[[
  The writer claims orders before storing them. An order whose outbox entry is gone was
  compensated (its late message must be dropped, not written) or already stored.

  KEYS[1] outbox hash   {item:<id>}:outbox
  KEYS[2] claimed set   {item:<id>}:claimed

  ARGV    order ids

  Returns one flag per order id, in order: 1 claimed (write it), 0 not pending (drop it).
]]
local flags = {}
for i, orderId in ipairs(ARGV) do
  if redis.call('HEXISTS', KEYS[1], orderId) == 1 then
    redis.call('SADD', KEYS[2], orderId)
    flags[i] = 1
  else
    flags[i] = 0
  end
end
return flags
