--[[
  Puts back a waiting room Redis lost (a failover under asynchronous replication, an AOF restart),
  from the settings MySQL keeps (shared/sale/rooms/stored.ts); only where there is no room hash: a room
  that survived, or came back meanwhile, is kept. What the room knew of its waiters is gone with
  it, so the room starts over: its queue, checkpoints, claims and waiters' records are cleared
  (the waiters join again, at the end), the served count restarts from 0 at now (or the opening),
  and the frontier, passes issued and places lost from 0. Passes that survived stay in the passes
  set and are counted outstanding, so the cap (units left less passes outstanding) still holds.

  KEYS[1] room hash     {item:<id>}:room
  KEYS[2] queue         {item:<id>}:queue
  KEYS[3] checkpoints   {item:<id>}:turns
  KEYS[4] claims        {item:<id>}:claimed
  KEYS[5] waiters       {item:<id>}:waiters

  ARGV[1] now, ms
  ARGV[2] opens at, ms
  ARGV[3] admitted per second
  ARGV[4] a pass's lifetime, ms
  ARGV[5] grace, ms
  ARGV[6] paused (1) or not (0)
  ARGV[7] status reads per second the room's refresh intervals aim at

  Returns 1 when restored, 0 when a room hash was there.
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5])
local anchor = math.max(tonumber(ARGV[1]), tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], 'opens', ARGV[2], 'rate', ARGV[3], 'pass', ARGV[4], 'grace', ARGV[5], 'paused', ARGV[6], 'budget', ARGV[7], 'base', 0, 'anchor', anchor)
return 1
