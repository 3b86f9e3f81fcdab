--[[
  What a waiting room's scripts share (`--- @include "./room-frontier.lua"`): the room read in one
  go, and the frontier, the arithmetic every one of them decides by. The queue is a sorted set of
  ranks; once the room has opened, ranks are only added after every other, so a waiter's ordinal
  (ZRANK) never changes. The frontier F is how many ordinals have had their turn:

    F = max(stored F, min(served, cap, queue length))
    served = base + (now - anchor) * rate / 1000   (base alone while paused; 0 before opening)
    cap    = issued + lost + ceil(units left / per-buyer limit) - passes outstanding

  so the ordinals admitted and not yet done with (waiting to claim, or holding a pass) never need
  more units than are left: each may buy up to the limit, and a pass used takes its units and its
  place in the cap together (ceil(u/l) - 1 <= ceil((u - q)/l) for q <= l), so F never falls. A
  read computes F and writes nothing; a write (room-advance) stores it with the time, a
  checkpoint: the ordinals below a checkpoint's F had their turn by its time, and those of them
  that claimed no pass within the grace after it lost their place (counted in `lost`, which frees
  their share of the cap for the next). No function here walks the queue.

  room_read(room, queue, passes, sale, outbox, now, given, holds): room is the room hash
  (fields opens, rate, base, anchor, paused, frontier, issued, lost, swept, grace, pass, budget,
  ticked, opened: set once, by the first script to run at or after the opening, its one write in a read),
  queue and passes the two sorted sets; given is '' for an item not split, whose units, limit,
  reservations unwritten and last failed hand-off are read here (the sale hash and the outbox), or
  what a split item's caller read of its buckets, '<units>|<limit>|<unwritten>|<failed at>' (0:
  none). holds is '<max backlog>|<hold ms>': while more reservations than max backlog wait
  unwritten (the writer is behind), or for hold ms after a hand-off failed (the order route's
  503s: its queue is failing), the frontier holds and nobody more is admitted. Returns nil when
  the item has no room.

  room_advance(r, turns, claimed, room, passes, now): sweeps the checkpoints whose grace has passed
  (at most 100 a call), drops expired passes, and stores the frontier with a checkpoint when it
  moved. Returns the places lost and the passes expired by this call.
]]
local function room_served(r, now)
  if now < r.opens then
    return 0
  end
  if r.paused then
    return r.base
  end
  return r.base + math.floor((now - math.max(r.anchor, r.opens)) * r.rate / 1000)
end

local function room_frontier(r)
  local units = math.max(r.units, 0)
  r.cap = r.issued + r.lost + math.ceil(units / r.limit) - r.outstanding
  r.admitted = r.frontier
  if not r.held then
    r.admitted = math.max(r.frontier, math.min(r.served, r.cap, r.queued))
  end
end

local function room_read(room, queue, passes, sale, outbox, now, given, holds)
  local f = redis.call('HMGET', room, 'opens', 'rate', 'base', 'anchor', 'paused', 'frontier', 'issued', 'lost', 'swept', 'grace', 'pass', 'budget', 'expired', 'joined', 'ticked', 'opened')
  if not f[1] then
    return nil
  end
  local units, limit, backlog, failed = string.match(given, '^(%d+)|(%d+)|(%d+)|(%d+)$')
  if given == '' then
    local s = redis.call('HMGET', sale, 'stock', 'limit', 'handOffFailedAt')
    units, limit, backlog, failed = s[1] or '0', s[2] or '1', redis.call('HLEN', outbox), s[3] or '0'
  end
  local max_backlog, hold_ms = string.match(holds, '^(%d+)|(%d+)$')
  local r = {
    opens = tonumber(f[1]), rate = tonumber(f[2]), base = tonumber(f[3] or '0'), anchor = tonumber(f[4] or f[1]),
    paused = f[5] == '1', frontier = tonumber(f[6] or '0'), issued = tonumber(f[7] or '0'), lost = tonumber(f[8] or '0'),
    swept = tonumber(f[9] or '0'), grace = tonumber(f[10]), pass = tonumber(f[11]), budget = tonumber(f[12]),
    expired = tonumber(f[13] or '0'), joined = tonumber(f[14] or '0'),
    units = tonumber(units), limit = math.max(tonumber(limit), 1), held = tonumber(backlog) > tonumber(max_backlog) or now < tonumber(failed) + tonumber(hold_ms),
    outstanding = redis.call('ZCOUNT', passes, '(' .. now, '+inf'),
    queued = redis.call('ZCARD', queue),
  }
  r.ticked = tonumber(f[15] or '0')
  -- The room's own record that it has opened, made by the first script of any kind to run at or
  -- after the opening (a read's one write): from then on a join ranks after everyone, whatever
  -- time its caller stamped it with (queue-join-8.lua), so no ordinal moves once anyone may have
  -- been told it was admitted.
  r.opened = f[16] == '1'
  if not r.opened and now >= r.opens then
    redis.call('HSET', room, 'opened', 1)
    r.opened = true
  end
  r.served = room_served(r, now)
  room_frontier(r)
  return r
end

local function room_advance(r, turns, claimed, room, passes, now)
  local lost = 0
  for _ = 1, 100 do
    local first = redis.call('ZRANGE', turns, 0, 0, 'WITHSCORES')
    if #first == 0 or tonumber(string.match(first[1], '|(%d+)$')) + r.grace > now then
      break
    end
    local upto = tonumber(first[2])
    if upto > r.swept then
      lost = lost + (upto - r.swept) - redis.call('ZCOUNT', claimed, r.swept, upto - 1)
      r.swept = upto
    end
    redis.call('ZREM', turns, first[1])
  end
  local expired = redis.call('ZREMRANGEBYSCORE', passes, '-inf', now)
  r.lost = r.lost + lost
  r.expired = r.expired + expired
  r.outstanding = redis.call('ZCOUNT', passes, '(' .. now, '+inf')
  room_frontier(r)
  if r.admitted > r.frontier then
    r.frontier = r.admitted
    redis.call('ZADD', turns, r.admitted, r.admitted .. '|' .. now)
  end
  redis.call('HSET', room, 'frontier', r.frontier, 'lost', r.lost, 'swept', r.swept, 'expired', r.expired, 'ticked', now)
  return lost, expired
end
