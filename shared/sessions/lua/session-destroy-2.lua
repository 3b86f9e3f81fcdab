--[[
  Ends one session: deletes it and takes it out of its user's index. A script rather than MULTI:
  a Redis out of memory refuses to queue any command of a transaction, deletes included, while a
  script's DEL and ZREM, which only free memory, still run.

  KEYS[1] session              {user:<id>}:session:<sid>   (a string, or a hash as releases before it wrote)
  KEYS[2] user's session index {user:<id>}:sessions

  ARGV[1] session id

  Returns 1 when the session still existed, 0 otherwise.
]]
redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('DEL', KEYS[1])
