-- A live session's owner and expiry, renewed when due (rolling); nil if unknown or expired.
-- KEYS[1] the session hash {p = player id, e = expires at}
-- ARGV[1] now  ARGV[2] ttl  ARGV[3] renew every (sessions.py renew_every: at most ttl/4)
-- ARGV[4] session set key prefix (+ player id)
-- ARGV[5] seconds Redis keeps the keys (ttl plus a margin; housekeeping only)  ARGV[6] digest
local held = redis.call('HMGET', KEYS[1], 'p', 'e')
if not held[1] then return false end
local now, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
local expires = tonumber(held[2])
if expires <= now then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', ARGV[4] .. held[1], ARGV[6])
  return false
end
if expires - now < ttl - tonumber(ARGV[3]) then
  expires = now + ttl
  redis.call('HSET', KEYS[1], 'e', string.format('%.17g', expires))
  redis.call('EXPIRE', KEYS[1], ARGV[5])
  redis.call('EXPIRE', ARGV[4] .. held[1], ARGV[5])
end
return {held[1], string.format('%.17g', expires)}
