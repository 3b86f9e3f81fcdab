--[[
  Gives a lease back after its holder's load failed, and wakes the waiters so one takes over.

  KEYS[1] lease key   <entry key>:lease

  ARGV[1] lease token
  ARGV[2] shard channel to publish on (SPUBLISH: the entry's hash tag, so its shard only); the message 'r' tells waiters the lease is free

  Returns 1 when released, 0 when the lease was no longer this holder's.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('SPUBLISH', ARGV[2], 'r')
return 1
