--[[
  The generic cell rate algorithm (GCRA), included by every script that takes from a rate
  (`--- @include "<path>/gcra.lua"`, which luaScript resolves), so the algorithm is written once. A
  request is allowed when the key's theoretical arrival time (TAT) is at most `burst` ahead of
  now; taking it moves the TAT on by one interval. Redis's clock, so every instance sees the same
  time.

  rate_take(key, stored, interval, burst): key holds the TAT, ms, and stored is what the caller
  read of it (false: nothing), with its other reads in one call (an MGET); interval (ms) is the
  period divided by the requests it allows, burst (ms) how far ahead of now the TAT may run
  (interval × (burst size − 1)); an interval of 0 means no limit. Takes the request when the rate
  allows it: returns 0 having taken it, or the ms until one would be allowed, having written
  nothing.
]]
local function redis_now_ms()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- One rate's TAT once a request is taken at now (stored: the TAT read at now, false: none), and
-- the ms until it allows one (0: now).
local function gcra_next(stored, interval, burst, now)
  local tat = math.max(tonumber(stored or '0'), now)
  return tat + interval, math.max(tat - now - tonumber(burst), 0)
end

-- Takes the request: the key keeps the TAT for as long as it is ahead of now.
local function gcra_set(key, next_tat, now)
  redis.call('SET', key, next_tat, 'PX', next_tat - now)
end

-- Takes at once rather than handing back a function that would: Lua's collector pays for a
-- closure a call. The SET as gcra_set makes it, written out: calling gcra_set from such a closure
-- cost Redis ~1,200 instructions more a take (callgrind, rate-take-1.lua, 8,000 calls).
local function rate_take(key, stored, interval, burst)
  interval = tonumber(interval)
  if interval == 0 then
    return 0
  end
  local now = redis_now_ms()
  local next_tat, wait = gcra_next(stored, interval, burst, now)
  if wait == 0 then
    redis.call('SET', key, next_tat, 'PX', next_tat - now)
  end
  return wait
end

--[[
  rates_take(key1, interval1, burst1, key2, interval2, burst2): a request against two rates at
  once (a reservation's buyer's and source's). Returns 0 once it took from both, or the ms until
  both would allow one, having taken from neither. Both are read at one clock reading with one
  MGET: a reservation's script pays for two rates in two calls where reading each alone took four.
  (A rate key holding another type reads as empty through MGET, where GET refused it: the keys are
  the rates' own, :rate:buyer: and :rate:source:, which nothing else writes.)
]]
local function rates_take(key1, interval1, burst1, key2, interval2, burst2)
  interval1, interval2 = tonumber(interval1), tonumber(interval2)
  if interval1 == 0 and interval2 == 0 then
    return 0
  end
  local now = redis_now_ms()
  local stored1, stored2 = false, false
  if interval1 > 0 and interval2 > 0 then
    local stored = redis.call('MGET', key1, key2)
    stored1, stored2 = stored[1], stored[2]
  elseif interval1 > 0 then
    stored1 = redis.call('GET', key1)
  else
    stored2 = redis.call('GET', key2)
  end
  -- No function is made per call: Lua's collector pays for each.
  local next1, wait1, next2, wait2 = 0, 0, 0, 0
  if interval1 > 0 then
    next1, wait1 = gcra_next(stored1, interval1, burst1, now)
  end
  if interval2 > 0 then
    next2, wait2 = gcra_next(stored2, interval2, burst2, now)
  end
  local wait = math.max(wait1, wait2)
  if wait == 0 then
    if interval1 > 0 then gcra_set(key1, next1, now) end
    if interval2 > 0 then gcra_set(key2, next2, now) end
  end
  return wait
end
