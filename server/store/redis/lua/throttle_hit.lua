-- Sliding-window attempt counter. KEYS[1] sorted set of attempt times
-- ARGV[1] now  ARGV[2] window seconds  ARGV[3] limit  ARGV[4] a unique member for this attempt
-- Returns "0" if the attempt is allowed (and counted), else seconds until one is allowed.
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.17g', now - window))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return string.format('%.17g', tonumber(first[2]) + window - now)
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('EXPIRE', KEYS[1], math.ceil(window) + 1)
return '0'
