--[[
  Stores a freshly loaded entry, but only for the holder of the current lease: a filler that
  paused past its lease can never overwrite a newer value. Wakes the waiters with the entry itself,
  so none of them has to read it back.

  KEYS[1] entry key   <prefix>e<version>:<suffix>
  KEYS[2] lease key   <entry key>:lease

  ARGV[1] lease token
  ARGV[2] entry       <expires at, ms>:<fill duration, ms>:<value>
  ARGV[3] physical lifetime, ms (logical lifetime plus the stale-serving window)
  ARGV[4] shard channel to publish on (SPUBLISH: the entry's hash tag, so its shard only); the message is 'v' followed by the entry

  Returns 1 when stored, 0 when the lease was lost (nothing written).
]]
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('DEL', KEYS[2])
redis.call('SPUBLISH', ARGV[4], 'v' .. ARGV[2])
return 1
