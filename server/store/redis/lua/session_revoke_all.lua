-- Delete every session of a player and log them. KEYS[1] the player's session set
-- KEYS[2] the revocation log (a stream)
-- ARGV[1] session key prefix (the digest is appended)  ARGV[2] log length kept
-- Returns how many there were.
local digests = redis.call('SMEMBERS', KEYS[1])
for _, digest in ipairs(digests) do
  redis.call('DEL', ARGV[1] .. digest)
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'd', digest)
end
redis.call('DEL', KEYS[1])
return #digests
