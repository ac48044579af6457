--[[
  counterIncr: add to a fixed-window counter and keep it expiring, atomically.
  One round trip whatever the key's state; safe to call from any number of clients.

  KEYS[1]  the counter key (wrap the shared part in {hash tag} for Redis Cluster)
  ARGV[1]  increment (integer, may be 0 to read)
  ARGV[2]  window length in milliseconds: the key's TTL, set when the key is created

  Returns  { count after the increment, milliseconds until the window resets }
]]
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return { count, ttl }
