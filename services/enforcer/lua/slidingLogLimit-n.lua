--[[
  slidingLogLimit: exact hard limits by a log of admitted requests (a sorted set
  scored by time), for a batch of checks. Memory grows with the limit: meant for
  small limits such as 5 failed payments per device per day. Only admitted
  requests are logged. Checks run in order, so two checks of one key in one batch
  see each other.

  KEYS[i]     log of check i (<prefix>hl:<policy>:sl:{<subject>})
  ARGV[1]     now in ms, or 0 to read the Redis server clock (the limiter always
              sends 0: one clock per key keeps enforcers with skewed clocks exact)
  ARGV[2i]    limit of check i: requests per interval
  ARGV[2i+1]  interval of check i, ms

  Returns  three values per check, flat: allowed (1 or 0; -1 when the check
           failed, the error text follows), remaining, retry after in ms (0 if allowed)
]]
local function hit(key, limit, interval, now)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - interval)
  local n = redis.call('ZCARD', key)
  if n < limit then
    -- Members must be unique: the time and the count so far, bumped if taken.
    local seq = n
    while redis.call('ZADD', key, 'NX', now, now .. '-' .. seq) == 0 do seq = seq + 1 end
    redis.call('PEXPIRE', key, interval)
    return 1, limit - n - 1, 0
  end
  -- Admitting needs the log to shrink below the limit: wait for that entry to age out.
  local blocking = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
  return 0, 0, math.max(1, tonumber(blocking[2]) + interval - now)
end

local now = tonumber(ARGV[1])
if now == 0 then
  local t = redis.call('TIME')
  now = t[1] * 1000 + math.floor(t[2] / 1000)
end
local out = {}
for i = 1, #KEYS do
  local ok, allowed, remaining, wait = pcall(hit, KEYS[i], tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1]), now)
  -- One bad key (wrong type, bad argument) fails its own check, not the batch.
  if not ok then allowed, remaining, wait = -1, type(allowed) == 'table' and allowed.err or tostring(allowed), 0 end
  out[3 * i - 2], out[3 * i - 1], out[3 * i] = allowed, remaining, wait
end
return out
