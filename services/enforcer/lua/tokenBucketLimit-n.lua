--[[
  tokenBucketLimit: hard limits that allow bursts, by GCRA (the generic cell rate
  algorithm: a token bucket kept as one number), for a batch of checks. The key
  holds the theoretical arrival time (TAT): when the bucket would be full again.
  A request is admitted when it would not push the TAT more than `size` emission
  intervals ahead of now. Checks run in order, so two checks of one key in one
  batch see each other.

  KEYS[i]     TAT of check i (<prefix>hl:<policy>:tb:{<subject>})
  ARGV[1]     now in ms, or 0 to read the Redis server clock (the limiter always
              sends 0: one clock per key keeps enforcers with skewed clocks exact)
  ARGV[2i]    bucket size of check i (the burst)
  ARGV[2i+1]  emission interval of check i, ms: 1000 / tokens refilled per second

  Returns  three values per check, flat: allowed (1 or 0; -1 when the check
           failed, the error text follows), remaining, retry after in ms (0 if allowed)
]]
local function hit(key, size, emission, now)
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then tat = now end
  local allowAt = tat + emission - size * emission
  if now < allowAt then
    return 0, 0, math.max(1, math.ceil(allowAt - now))
  end
  local newTat = tat + emission
  -- %.17g keeps the TAT exact; the key goes once the bucket is full again.
  redis.call('SET', key, string.format('%.17g', newTat), 'PX', math.ceil(newTat - now))
  return 1, math.floor((now - allowAt) / emission + 1e-9), 0
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
