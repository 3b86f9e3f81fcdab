--[[
  The writer claims reservations (orders, coupons) before storing them. One whose outbox entry
  is gone was compensated (its late message must be dropped, not written) or already stored.
  Once claimed, a compensating script refuses to release it.

  KEYS[1] outbox hash   {<owner>}:outbox     reservation id -> record
  KEYS[2] claimed set   {<owner>}:claimed

  ARGV    reservation ids

  Returns one flag per id, in order: 1 claimed (write it), 0 not pending (drop it).
]]
local flags = {}
for i, id in ipairs(ARGV) do
  if redis.call('HEXISTS', KEYS[1], id) == 1 then
    redis.call('SADD', KEYS[2], id)
    flags[i] = 1
  else
    flags[i] = 0
  end
end
return flags
