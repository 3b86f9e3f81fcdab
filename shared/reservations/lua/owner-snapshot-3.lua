--[[
  Reconciliation's one look at an owner in Redis (at one bucket of it, when it is split over
  several hash slots): its live state, its outbox and the moves it started to other buckets, read
  in one atomic step, so no reservation or move can land between them.

  KEYS[1] state hash    {<owner>}:sale or {<owner>}:deal
  KEYS[2] outbox hash   {<owner>}:outbox   reservation id -> record
  KEYS[3] moves hash    {<owner>}:moves    move id -> "<recipient bucket>|<units>|<ms>"

  Returns {state as field/value pairs, outbox as id/record pairs, moves as id/record pairs}.
]]
return { redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3]) }
