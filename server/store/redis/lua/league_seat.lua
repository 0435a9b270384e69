-- Seat whole tables: each only if all its players are still queued (with the expected entry).
-- KEYS[1] queue hash  KEYS[2] queue names hash  KEYS[3] pending tables hash
-- KEYS[4] queue last-seen sorted set
-- KEYS[5..] the assignment key of every player, table after table, in ARGV order
-- ARGV[1] assignment ttl (ms)  ARGV[2] table count; then per table: room id, player count,
--   and per player: id, expected encoded entry ("" = any entry)
-- A table whose room is marked as being abandoned ("-" in the pending hash) is not seated.
-- Returns one 1/0 per table. A failed table writes nothing.
local ttl = ARGV[1]
local tables = tonumber(ARGV[2])
local a = 3
local k = 5
local result = {}
for t = 1, tables do
  local room = ARGV[a]
  local count = tonumber(ARGV[a + 1])
  local ok = redis.call('HGET', KEYS[3], room) ~= '-'
  local p = 0
  while ok and p < count do
    local current = redis.call('HGET', KEYS[1], ARGV[a + 2 + 2 * p])
    local wanted = ARGV[a + 3 + 2 * p]
    ok = current and (wanted == '' or current == wanted)
    p = p + 1
  end
  if ok then
    for q = 0, count - 1 do
      local id = ARGV[a + 2 + 2 * q]
      redis.call('HDEL', KEYS[1], id)
      redis.call('HDEL', KEYS[2], id)
      redis.call('ZREM', KEYS[4], id)
      redis.call('SET', KEYS[k + q], room, 'PX', ttl)
    end
    redis.call('HDEL', KEYS[3], room)
    result[t] = 1
  else
    result[t] = 0
  end
  a = a + 2 + 2 * count
  k = k + count
end
return result
