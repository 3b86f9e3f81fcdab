--[[
  Creates a session and lists it in its user's index.

  KEYS[1] session             {user:<id>}:session:<sid>   (string: shared/sessions/store.ts's sessionValue)
  KEYS[2] user's session index {user:<id>}:sessions   (zset: sid scored by absolute expiry, ms)

  ARGV[1] session id
  ARGV[2] the session's value, its absolute expiry (now + ARGV[5]) in it
  ARGV[3] now, ms (server clock, passed in so every caller agrees on one clock)
  ARGV[4] idle timeout, ms
  ARGV[5] absolute lifetime, ms

  Returns 1.
]]
local now = tonumber(ARGV[3])
local idle = tonumber(ARGV[4])
local absolute = tonumber(ARGV[5])
local expiresAt = now + absolute

redis.call('SET', KEYS[1], ARGV[2], 'PX', math.min(idle, absolute))

-- Trimmed here, when written, so the index never needs a sweeper or keyspace notifications.
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], expiresAt, ARGV[1])
redis.call('PEXPIRE', KEYS[2], absolute)
return 1
