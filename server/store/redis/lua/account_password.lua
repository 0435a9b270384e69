-- Replace an account's password hash and revoke all its sessions in the same step.
-- KEYS[1] accounts hash  KEYS[2] the player's session set  KEYS[3] the revocation log
-- ARGV[1] player id  ARGV[2] new account JSON  ARGV[3] session key prefix (+ the digest)
-- ARGV[4] revocation log length kept
-- Returns the number of sessions revoked, or -1 if there is no such account.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local digests = redis.call('SMEMBERS', KEYS[2])
for _, digest in ipairs(digests) do
  redis.call('DEL', ARGV[3] .. digest)
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'd', digest)
end
redis.call('DEL', KEYS[2])
return #digests
