--[[
  hardLimit: a batch of hard-limit checks, atomically. Each check names its
  algorithm; all three count only admitted requests, each for its cost (1 for an
  ordinary request, up to 1000000), and give their keys a TTL so idle keys
  disappear. A request is admitted whole or not at all: a cost over the limit (or
  the bucket size) is never admitted. Checks run in order, so two checks of one key in one batch
  see each other. One bad key (wrong type, bad argument) fails its own check, not
  the batch.

  sw  sliding-window counter (the default). The key holds two fixed windows'
      counts as "<window>:<current>:<previous>", windows numbered
      floor(now / interval). The count over the sliding window is the current
      window's count plus the previous one's, weighted by how much of it the
      sliding window still covers (the two-window approximation Cloudflare
      measured at 0.003% wrong decisions). One read and one write per check.
  sl  exact sliding log: a sorted set of admitted requests scored by time, one
      entry per request whatever its cost (the cost in the entry's name), and the
      running total of their costs in the set as the entry #total (score minus the
      total). One request is a constant number of commands, whatever its cost; each
      entry is read once more when it ages out. Memory grows with the requests in the
      window: for small limits, such as 5 failed payments per device per day.
  tb  token bucket by GCRA (the generic cell rate algorithm): the key holds the
      theoretical arrival time (TAT), when the bucket would be full again; a
      request is admitted when it would not push the TAT more than `size`
      emission intervals ahead of now.

  KEYS[i]     key of check i (<prefix>hl:<policy>:<algorithm>:{<subject>})
  ARGV[1]     now in ms, or 0 to read the Redis server clock (the limiter always
              sends 0: one clock per key keeps enforcers with skewed clocks exact)
  ARGV[4i-2]  algorithm of check i: sw, sl or tb
  ARGV[4i-1]  sw, sl: limit (cost per interval); tb: bucket size (the burst)
  ARGV[4i]    sw, sl: interval, ms; tb: emission interval, ms (1000 / refill per second)
  ARGV[4i+1]  cost of check i: a whole number from 1 to 1000000 (else the check fails)

  Returns  three values per check, flat: allowed (1 or 0; -1 when the check
           failed, the error text follows), remaining, retry after in ms (0 if allowed)
]]
local MAX_COST = 1000000

local function slidingWindow(key, limit, interval, now, cost)
  local w = math.floor(now / interval)
  local current, previous = 0, 0
  local held = redis.call('GET', key)
  if held then
    local hw, hc, hp = string.match(held, '^(%d+):(%d+):(%d+)$')
    hw = tonumber(hw)
    if hw == w then
      current, previous = tonumber(hc), tonumber(hp)
    elseif hw == w - 1 then
      previous = tonumber(hc)
    end
  end
  local into = now - w * interval
  local estimate = previous * (interval - into) / interval + current
  if estimate + cost <= limit then
    -- Kept until the next window, which still reads this one, ends.
    redis.call('SET', key, string.format('%d:%d:%d', w, current + cost, previous), 'PX', (w + 2) * interval - now)
    return 1, math.floor(limit - estimate - cost), 0
  end
  -- Never admitted: a whole window is the honest wait to give.
  if cost > limit then return 0, 0, interval end
  local wait
  if current + cost > limit then
    -- Only the next window can admit, once this window's weight has fallen enough (current > 0 here).
    wait = (w + 1) * interval - now + interval * (1 - (limit - cost) / current)
  else
    wait = interval * (1 - (limit - cost - current) / previous) - into
  end
  return 0, 0, math.max(1, math.ceil(wait))
end

-- The log's running total of admitted cost, kept in the log itself as a member with
-- score minus the total: below every request's time, so never aged out with them.
local TOTAL = '#total'
-- Entries read per ZRANGE; and the oldest entries read to find when a refused request
-- could be admitted: a bound on the work one refusal costs (past it, the wait given is
-- the earliest possible, a lower bound).
local WAIT_SCAN = 64

local function costOf(member)
  return tonumber(string.match(member, ':(%d+)$')) or 1
end

local function slidingLog(key, limit, interval, now, cost)
  -- Only ZRANGE by index, ZCARD, ZADD, ZREMRANGEBYSCORE and PEXPIRE: the ACL the docs list.
  -- #total, when present, is the first entry (every request's score is a time, above 0).
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  local total, from
  if first[1] == TOTAL then
    total, from = -tonumber(first[2]), 1
  else
    -- A log without its total (new, or written before costs): every entry counted 1.
    total, from = redis.call('ZCARD', key), 0
  end
  -- Entries aged out leave the total: each is read once, when it ages out.
  local gone, horizon = 0, now - interval
  while true do
    local chunk = redis.call('ZRANGE', key, from + gone, from + gone + WAIT_SCAN - 1, 'WITHSCORES')
    local more = #chunk > 0
    for i = 1, #chunk, 2 do
      if tonumber(chunk[i + 1]) > horizon then
        more = false
        break
      end
      total = total - costOf(chunk[i])
      gone = gone + 1
    end
    if not more then break end
  end
  if total < 0 then total = 0 end
  if gone > 0 then
    redis.call('ZREMRANGEBYSCORE', key, '(0', horizon)
    -- The key exists (it held those entries): this keeps its expiry.
    redis.call('ZADD', key, -total, TOTAL)
    from = 1
  end
  if total + cost <= limit then
    -- One entry per request, its cost in its name. Unique: the time, a count, bumped if taken.
    local seq = redis.call('ZCARD', key)
    while redis.call('ZADD', key, 'NX', now, now .. '-' .. seq .. ':' .. cost) == 0 do seq = seq + 1 end
    redis.call('ZADD', key, -(total + cost), TOTAL)
    redis.call('PEXPIRE', key, interval)
    return 1, limit - total - cost, 0
  end
  if cost > limit then return 0, 0, interval end
  -- Admitting needs the total to fall to limit - cost: wait for the entries that get it there to age out.
  local oldest = redis.call('ZRANGE', key, from, from + WAIT_SCAN - 1, 'WITHSCORES')
  local over = total + cost - limit
  local at = nil
  for i = 1, #oldest, 2 do
    at = tonumber(oldest[i + 1])
    over = over - costOf(oldest[i])
    if over <= 0 then break end
  end
  if at == nil then return 0, 0, interval end
  return 0, 0, math.max(1, at + interval - now)
end

local function tokenBucket(key, size, emission, now, cost)
  if cost > size then return 0, 0, math.max(1, math.ceil(size * emission)) end
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then tat = now end
  local allowAt = tat + cost * emission - size * emission
  if now < allowAt then
    return 0, 0, math.max(1, math.ceil(allowAt - now))
  end
  local newTat = tat + cost * emission
  -- %.17g keeps the TAT exact; the key goes once the bucket is full again.
  redis.call('SET', key, string.format('%.17g', newTat), 'PX', math.ceil(newTat - now))
  return 1, math.floor((now - allowAt) / emission + 1e-9), 0
end

local algorithms = { sw = slidingWindow, sl = slidingLog, tb = tokenBucket }

local function check(key, algorithm, a, b, now, cost)
  local hit = algorithms[algorithm]
  if hit == nil then error('unknown algorithm ' .. tostring(algorithm)) end
  if cost == nil or cost < 1 or cost > MAX_COST or cost ~= math.floor(cost) then error('cost must be a whole number from 1 to ' .. MAX_COST) end
  return hit(key, a, b, now, cost)
end

local now = tonumber(ARGV[1])
if now == 0 then
  local t = redis.call('TIME')
  now = t[1] * 1000 + math.floor(t[2] / 1000)
end
local out = {}
for i = 1, #KEYS do
  local ok, allowed, remaining, wait = pcall(check, KEYS[i], ARGV[4 * i - 2], tonumber(ARGV[4 * i - 1]), tonumber(ARGV[4 * i]), now, tonumber(ARGV[4 * i + 1]))
  if not ok then allowed, remaining, wait = -1, type(allowed) == 'table' and allowed.err or tostring(allowed), 0 end
  out[3 * i - 2], out[3 * i - 1], out[3 * i] = allowed, remaining, wait
end
return out
