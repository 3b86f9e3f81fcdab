--[[
  The generic cell rate algorithm (GCRA), included by every script that takes from a rate
  (`--- @include "<path>/gcra.lua"`, which luaScript resolves), so the algorithm is written once. A
  request is allowed when the key's theoretical arrival time (TAT) is at most `burst` ahead of
  now; taking it moves the TAT on by one interval. Redis's clock, so every instance sees the same
  time.

  rate_wait(key, interval, burst): key holds the TAT, ms; interval (ms) is the period divided by
  the requests it allows, burst (ms) how far ahead of now the TAT may run (interval × (burst size −
  1)); an interval of 0 means no limit. Returns the ms until a request would be allowed (0: now),
  and a function that takes the request. It writes nothing itself, so a script can look at all
  its rates, and its other checks, before it takes any.
]]
local function rate_wait(key, interval, burst)
  interval = tonumber(interval)
  if interval == 0 then
    return 0, function() end
  end
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local tat = math.max(tonumber(redis.call('GET', key) or '0'), now)
  local wait = math.max(tat - now - tonumber(burst), 0)
  return wait, function()
    redis.call('SET', key, tat + interval, 'PX', tat + interval - now)
  end
end

--[[
  rates_take(key1, interval1, burst1, key2, interval2, burst2): a request against two rates at
  once (a reservation's buyer's and source's). Returns 0 once it took from both, or the ms until
  both would allow one, having taken from neither.
]]
local function rates_take(key1, interval1, burst1, key2, interval2, burst2)
  local wait1, take1 = rate_wait(key1, interval1, burst1)
  local wait2, take2 = rate_wait(key2, interval2, burst2)
  local wait = math.max(wait1, wait2)
  if wait == 0 then
    take1()
    take2()
  end
  return wait
end
