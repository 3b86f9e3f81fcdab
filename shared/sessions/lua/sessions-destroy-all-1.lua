--[[
  Signs a user out everywhere: deletes every session in the user's index, then the index.

  KEYS[1] user's session index {user:<id>}:sessions

  ARGV[1] session key prefix   {user:<id>}:session:
          It carries the same hash tag as KEYS[1], so every key built from it lives in the same
          cluster slot as the index.

  Returns the number of sessions deleted.
]]
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
local deleted = 0
for _, id in ipairs(ids) do
  deleted = deleted + redis.call('DEL', ARGV[1] .. id)
end
redis.call('DEL', KEYS[1])
return deleted
