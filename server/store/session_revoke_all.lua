-- Delete every session of a player. KEYS[1] the player's session set
-- ARGV[1] session key prefix (the digest is appended). Returns how many there were.
local digests = redis.call('SMEMBERS', KEYS[1])
for _, digest in ipairs(digests) do redis.call('DEL', ARGV[1] .. digest) end
redis.call('DEL', KEYS[1])
return #digests
