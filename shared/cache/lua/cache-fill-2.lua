--[[
  Stores a freshly loaded value, but only for the holder of the current lease: a filler that
  paused past its lease can never overwrite a newer value. Wakes the waiters with the value itself,
  so none of them has to read it back.

  KEYS[1] entry key   <prefix>v<version>:<suffix>
  KEYS[2] lease key   <entry key>:lease

  ARGV[1] lease token
  ARGV[2] value
  ARGV[3] expires at, ms (logical expiry, jittered)
  ARGV[4] fill duration, ms (for early refresh)
  ARGV[5] physical lifetime, ms (logical lifetime plus the stale-serving window)
  ARGV[6] channel to publish on; the message is 'v' followed by the value

  Returns 1 when stored, 0 when the lease was lost (nothing written).
]]
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'value', ARGV[2], 'expires', ARGV[3], 'delta', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('DEL', KEYS[2])
redis.call('PUBLISH', ARGV[6], 'v' .. ARGV[2])
return 1
