--[[
  A split item's pass, copied into the buyer's own bucket (the slot its reservation runs in), where
  the reserving script checks it. Idempotent: issuing writes the item's slot first (pass-claim-7)
  and then this one, and a retry writes the same pass again. Drops the bucket's expired passes.

  KEYS[1] passes   {item:<id>#<k>.<i>}:passes   <user id>:<token> -> expires at, ms

  ARGV[1] now, ms
  ARGV[2] <user id>:<token>
  ARGV[3] expires at, ms

  Returns 1.
]]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if tonumber(ARGV[3]) > tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
end
return 1
