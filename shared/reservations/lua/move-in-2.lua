--[[
  The second step of a move between buckets (see move-out-2.lua), on its own: take_in, from
  take-in.lua, included below.

  KEYS[1] recipient's state hash   {<bucket>}:sale                  fields stock, moves
  KEYS[2] taken-in record          {<bucket>}:moved-in:<move id>    kept a day

  ARGV[1] units

  Returns 1 when taken in (now or before), or -18 when the recipient has no state.
]]
--- @include "./take-in.lua"
return take_in(KEYS[1], KEYS[2], ARGV[1])
