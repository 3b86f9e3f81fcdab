--[[
  Creates a session and lists it in its user's index.

  KEYS[1] session hash        {user:<id>}:session:<sid>
  KEYS[2] user's session index {user:<id>}:sessions   (zset: sid scored by absolute expiry, ms)

  ARGV[1] session id
  ARGV[2] user id
  ARGV[3] role
  ARGV[4] email
  ARGV[5] now, ms (server clock, passed in so every caller agrees on one clock)
  ARGV[6] idle timeout, ms
  ARGV[7] absolute lifetime, ms

  Returns 1.
]]
local now = tonumber(ARGV[5])
local idle = tonumber(ARGV[6])
local absolute = tonumber(ARGV[7])
local expiresAt = now + absolute

redis.call('HSET', KEYS[1], 'uid', ARGV[2], 'role', ARGV[3], 'email', ARGV[4], 'exp', expiresAt)
redis.call('PEXPIRE', KEYS[1], math.min(idle, absolute))

-- Trimmed here, when written, so the index never needs a sweeper or keyspace notifications.
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], expiresAt, ARGV[1])
redis.call('PEXPIRE', KEYS[2], absolute)
return 1
