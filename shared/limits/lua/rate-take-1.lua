--[[
  One request against a rate limit (rate_take, from gcra.lua, included below).

  KEYS[1] the limit's key, e.g. {ip:<address>}:signup   holds the TAT, ms

  ARGV[1] interval, ms: the period divided by the requests it allows
  ARGV[2] burst, ms: how far ahead of now the TAT may run (interval × (burst size − 1))

  Returns 0 when allowed (and takes it), or the ms until a request would be.
]]
--- @include "./gcra.lua"
return rate_take(KEYS[1], redis.call('GET', KEYS[1]), ARGV[1], ARGV[2])
