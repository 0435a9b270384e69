-- Post one rated game: exactly once per game id, compare-and-set on every participant.
-- KEYS[1] game hash {r=record JSON, n=nonce of the posting call}
-- KEYS[2] ladder sorted set (score -ladder score, member id)
-- KEYS[3] players hash (id -> "version|mu|sigma|games")   KEYS[4] names hash (id -> name)
-- KEYS[5] accounts hash (only accounts go on the ladder)
-- KEYS[6] ladder scores hash (id -> ladder score of every non-provisional participant)
-- KEYS[7 + 2(i-1)], KEYS[8 + 2(i-1)]: participant i's history list and recent-games list
-- ARGV[1] game id  ARGV[2] record JSON  ARGV[3] nonce  ARGV[4] history cap  ARGV[5] recent cap
-- ARGV[6] participant count; then 6 per participant: id, expected version, encoded new
--   rating without the version ("mu|sigma|games"), name, ladder score ("" = not on the
--   ladder), history point JSON
-- Returns 'posted', 'already' or 'conflict'. Every check comes before any write: Redis does
-- not roll a script back.
local posted_by = redis.call('HGET', KEYS[1], 'n')
if posted_by then
  -- A client retry of this very call (its reply was lost) reports the earlier success.
  if posted_by == ARGV[3] then return 'posted' end
  return 'already'
end
local n = tonumber(ARGV[6])
for i = 0, n - 1 do
  local base = 7 + 6 * i
  local stored = redis.call('HGET', KEYS[3], ARGV[base])
  local version = 0
  if stored then version = tonumber(string.match(stored, '^(%d+)|')) end
  if version ~= tonumber(ARGV[base + 1]) then return 'conflict' end
end
redis.call('HSET', KEYS[1], 'r', ARGV[2], 'n', ARGV[3])
local history_cap = tonumber(ARGV[4])
local recent_cap = tonumber(ARGV[5])
for i = 0, n - 1 do
  local base = 7 + 6 * i
  local id = ARGV[base]
  local version = string.format('%d', tonumber(ARGV[base + 1]) + 1)
  redis.call('HSET', KEYS[3], id, version .. '|' .. ARGV[base + 2])
  redis.call('HSET', KEYS[4], id, ARGV[base + 3])
  if ARGV[base + 4] == '' then
    redis.call('HDEL', KEYS[6], id)
    redis.call('ZREM', KEYS[2], id)
  else
    redis.call('HSET', KEYS[6], id, ARGV[base + 4])
    if redis.call('HEXISTS', KEYS[5], id) == 1 then
      redis.call('ZADD', KEYS[2], ARGV[base + 4], id)
    else
      redis.call('ZREM', KEYS[2], id)
    end
  end
  local history = KEYS[7 + 2 * i]
  redis.call('LPUSH', history, ARGV[base + 5])
  redis.call('LTRIM', history, 0, history_cap - 1)
  local recent = KEYS[8 + 2 * i]
  redis.call('LPUSH', recent, ARGV[1])
  redis.call('LTRIM', recent, 0, recent_cap - 1)
end
return 'posted'
