--[[
  One delivery of a mail against its reader's two rates, in the reader's slot, in order: what this
  sender may send the reader, then what the reader may receive from anyone. The reader's own rate
  is taken only for a delivery the sender's rate to them admits, so a flood from one sender never
  uses up its target's rate for everyone else's mail. One call where two takes of rate-take-1.lua
  cost two; both rates are gcra.lua's (included below), read with one MGET at one clock reading.

  KEYS[1] what the sender may send the reader   {user:<id>}:rate:mail:<sender>   holds the TAT, ms
  KEYS[2] what the reader may receive           {user:<id>}:rate:mail           holds the TAT, ms

  ARGV[1] the sender-to-reader rate's interval, ms
  ARGV[2] its burst, ms
  ARGV[3] the reader's rate's interval, ms
  ARGV[4] its burst, ms

  Returns 0 when both admitted it (both taken), 1 when the sender-to-reader rate refused it
  (nothing taken), 2 when the reader's rate refused it (the sender-to-reader rate taken, as a
  take of it alone would have).
]]
--- @include "./gcra.lua"
local stored = redis.call('MGET', KEYS[1], KEYS[2])
local now = redis_now_ms()
local next_sender, wait_sender = gcra_next(stored[1], tonumber(ARGV[1]), ARGV[2], now)
if wait_sender > 0 then
  return 1
end
gcra_set(KEYS[1], next_sender, now)
local next_reader, wait_reader = gcra_next(stored[2], tonumber(ARGV[3]), ARGV[4], now)
if wait_reader > 0 then
  return 2
end
gcra_set(KEYS[2], next_reader, now)
return 0
