--[[
  Reads a cache entry under the current version, in one round trip.

  KEYS[1] version counter   e.g. {catalog}:version   (missing means version 0)

  ARGV[1] entry key prefix  carries the same hash tag as KEYS[1], e.g. {catalog}:programs:
  ARGV[2] entry key suffix  the normalised query
          The entry key is <prefix>v<version>:<suffix>, in the same cluster slot as KEYS[1].

  Returns {version, value, expires at (ms), fill duration (ms)}; value, expiry and duration are
  false on a miss. An entry past its expiry but still present is stale: servable while one
  caller refreshes it.
]]
local version = redis.call('GET', KEYS[1]) or '0'
local entry = redis.call('HMGET', ARGV[1] .. 'v' .. version .. ':' .. ARGV[2], 'value', 'expires', 'delta')
return { version, entry[1], entry[2], entry[3] }
