-- Compare-and-set one room transition (also creates a room: expected version 0).
-- KEYS[1] state hash {v=version, s=state, q=last event seq, n=nonce of the last commit,
--   x=1 while the room's keys expire, 0 while they last (absent: written before x was kept)}
-- KEYS[2] event log stream, entry id "<seq>-0", fields d=data, p=seq of the previous event
-- KEYS[3] the deadline sorted set of the room's shard (member = room id)
-- KEYS[4] archive hash of the room's current game (finished hands' records)
-- KEYS[5] set of the nodes whose sockets watch the room
-- ARGV[1] expected version   ARGV[2] new state   ARGV[3] deadline, "" to clear
-- ARGV[4] room id            ARGV[5] shard channel    ARGV[6] log MAXLEN (approximate)
-- ARGV[7] msgpack payload to publish, "" if no events
-- ARGV[8] commit nonce       ARGV[9] time to live of the room's keys in ms, "" for none
-- ARGV[10] n, the number of archive fields   ARGV[11] the committing node, "" if unknown
-- then n archive field, value pairs, then seq, data pairs
-- Returns 1 when applied (or already applied by this very call), 0 on a version conflict.
local expected = tonumber(ARGV[1])
local held = redis.call('HMGET', KEYS[1], 'v', 'q', 'x')
local version = tonumber(held[1] or '0')
if version ~= expected then
  -- The client retries a call whose reply was lost: report the earlier success, apply nothing.
  if version == expected + 1 and redis.call('HGET', KEYS[1], 'n') == ARGV[8] then
    return 1
  end
  return 0
end
local n = tonumber(ARGV[10])
local first_event = 12 + 2 * n
local last = held[2] or '0'
-- Check every seq before writing anything: Redis does not roll a script back on error.
local prev = tonumber(last)
for i = first_event, #ARGV, 2 do
  local seq = tonumber(ARGV[i])
  if seq == nil or seq <= prev then
    return redis.error_reply('EVENTORDER event seq ' .. ARGV[i] .. ' is not after ' .. prev)
  end
  prev = seq
end
local newest = last
if #ARGV >= first_event then newest = ARGV[#ARGV - 1] end
redis.call('HSET', KEYS[1], 'v', string.format('%d', expected + 1), 's', ARGV[2],
  'q', newest, 'n', ARGV[8])
local before = last
for i = first_event, #ARGV, 2 do
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], ARGV[i] .. '-0', 'd', ARGV[i + 1], 'p', before)
  before = ARGV[i]
end
for i = 12, 11 + 2 * n, 2 do
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[3], ARGV[4])
else
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
end
-- A finished or idle room expires; a room in play never does (its clocks will finish it).
-- Its keys are made lasting only when they may be expiring (x is not 0): a card in play costs
-- no PERSIST. A room stored before x was kept is made lasting once, as an expiring one.
if ARGV[9] == '' then
  if held[3] ~= '0' then
    for _, k in ipairs({1, 2, 4, 5}) do
      redis.call('PERSIST', KEYS[k])
    end
    redis.call('HSET', KEYS[1], 'x', '0')
  end
else
  redis.call('HSET', KEYS[1], 'x', '1')
  for _, k in ipairs({1, 2, 4, 5}) do
    redis.call('PEXPIRE', KEYS[k], ARGV[9])
  end
end
-- Published for the other nodes that watch the room; the committing node delivers its own
-- events itself, so when it is the only watcher nobody needs them.
if ARGV[7] ~= '' then
  local alone = ARGV[11] ~= '' and redis.call('SCARD', KEYS[5]) == 1
    and redis.call('SISMEMBER', KEYS[5], ARGV[11]) == 1
  if not alone then
    redis.call('SPUBLISH', ARGV[5], ARGV[7])
  end
end
return 1
