--[[
  Reconciliation's one look at an owner in Redis: its live state and its outbox, read in one
  atomic step, so no reservation can land between the two.

  KEYS[1] state hash    {<owner>}:sale or {<owner>}:deal
  KEYS[2] outbox hash   {<owner>}:outbox   reservation id -> record

  Returns {state as field/value pairs, outbox as id/record pairs}.
]]
return { redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]) }
