-- Take every node that tracks rooms but whose liveness key has expired (see node_alive).
-- KEYS[1] set of node ids that track rooms   ARGV[1] key prefix of the node keys
-- Node keys share the {nodes} hash tag with KEYS[1], so on a cluster they are in its slot.
-- Returns a flat list: node, room count, rooms..., node, room count, rooms...
local out = {}
for _, node in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[1] .. 'alive:' .. node) == 0 then
    local rooms_key = ARGV[1] .. 'rooms:' .. node
    local rooms = redis.call('SMEMBERS', rooms_key)
    redis.call('DEL', rooms_key)
    redis.call('SREM', KEYS[1], node)
    out[#out + 1] = node
    out[#out + 1] = #rooms
    for _, room in ipairs(rooms) do out[#out + 1] = room end
  end
end
return out
