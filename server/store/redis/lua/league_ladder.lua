-- Ladder rows with competition ranks (equal displays share a rank), in one consistent read.
-- KEYS[1] ladder sorted set (score -display, so ZRANGE gives the highest first, ties by id)
-- KEYS[2] players hash (id -> "version|mu|sigma|games")   KEYS[3] names hash
-- ARGV[1] start, ARGV[2] stop (0-based, inclusive), or, when ARGV[3] is a player id, the rows
-- ARGV[4] either side of that player's (nothing if the player is not on the ladder).
local start, stop = tonumber(ARGV[1]), tonumber(ARGV[2])
if ARGV[3] ~= '' then
  local pos = redis.call('ZRANK', KEYS[1], ARGV[3])
  if not pos then return {} end
  local k = tonumber(ARGV[4])
  start = math.max(0, pos - k)
  stop = pos + k
end
if stop < start then return {} end
local rows = redis.call('ZRANGE', KEYS[1], start, stop, 'WITHSCORES')
local out = {}
local prev_score, prev_rank = nil, nil
for i = 1, #rows, 2 do
  local id, score = rows[i], rows[i + 1]
  local rank = prev_rank
  if score ~= prev_score then
    -- One more than the number of strictly higher displays (strictly lower scores).
    rank = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. score) + 1
  end
  prev_score, prev_rank = score, rank
  out[#out + 1] = id
  out[#out + 1] = rank
  out[#out + 1] = score
  out[#out + 1] = redis.call('HGET', KEYS[2], id) or ''
  out[#out + 1] = redis.call('HGET', KEYS[3], id) or ''
end
return out
