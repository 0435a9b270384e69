-- Delete lease KEYS[1] only if holder ARGV[1] still holds it (never someone else's).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
