--[[
  Loads a session and slides its idle timeout, in one round trip per authenticated request.

  KEYS[1] session hash {user:<id>}:session:<sid>

  ARGV[1] now, ms
  ARGV[2] idle timeout, ms

  Returns {user id, role, email}, or
    -1  no such session (never created, signed out, idle or past its absolute lifetime)
]]
local fields = redis.call('HMGET', KEYS[1], 'uid', 'role', 'email', 'exp')
if not fields[1] then
  return -1
end

-- The idle window slides but never past the absolute lifetime.
local remaining = tonumber(fields[4]) - tonumber(ARGV[1])
if remaining <= 0 then
  redis.call('DEL', KEYS[1])
  return -1
end
redis.call('PEXPIRE', KEYS[1], math.min(tonumber(ARGV[2]), remaining))
return { fields[1], fields[2], fields[3] }
