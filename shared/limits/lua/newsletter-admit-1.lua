--[[
  Admits a newsletter new to a reader under their cap of new newsletters in a sliding window:
  the newsletters MySQL already holds as new to them in the window (the caller's read, passed in)
  and those admitted here whose subscriptions may not be stored yet, counted once each. Redis only
  stands for the second kind, so losing this key loses at most the admissions in flight.

  KEYS[1] the reader's admissions   {user:<id>}:rate:new-newsletters   sorted set, newsletter id → ms admitted

  ARGV[1] the newsletter's id
  ARGV[2] newsletters new to a reader the window allows
  ARGV[3] the window, ms
  ARGV[4] 1 to admit past the cap (the reader asked for this one), else 0
  ARGV[5…] ids of the newsletters MySQL holds as new to the reader in the window

  Returns 1 when admitted (an id admitted already is admitted again, so every mail of one
  newsletter arriving together is), 0 when the cap refuses it.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 1
end
local counted, count = {}, 0
local function add(id)
  if not counted[id] then
    counted[id] = true
    count = count + 1
  end
end
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  add(id)
end
for i = 5, #ARGV do
  add(ARGV[i])
end
if count >= tonumber(ARGV[2]) and ARGV[4] ~= '1' then
  return 0
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], window)
return 1
