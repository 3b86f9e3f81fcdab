--[[
  One request against a rate limit (rate_wait, from gcra.lua, included below).

  KEYS[1] the limit's key, e.g. {ip:<address>}:signup   holds the TAT, ms

  ARGV[1] interval, ms: the period divided by the requests it allows
  ARGV[2] burst, ms: how far ahead of now the TAT may run (interval × (burst size − 1))

  Returns 0 when allowed (and takes it), or the ms until a request would be.
]]
--- @include "./gcra.lua"
local wait, take = rate_wait(KEYS[1], ARGV[1], ARGV[2])
if wait == 0 then
  take()
end
return wait
