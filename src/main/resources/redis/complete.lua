-- Record the final answer, only while the caller still owns the key (fencing: a request whose
-- lease expired must not overwrite a newer owner's state). An owner of '' means the caller
-- never held a reservation (Redis was skipped or had forgotten the key): then write only if the
-- key is free, so an answer refilled from Postgres never replaces anything.
-- KEYS[1] the key's hash   ARGV[1] owner token   ARGV[2] fingerprint   ARGV[3] retention (ms)
-- ARGV[4] status   ARGV[5] content type   ARGV[6] location ('' when none)   ARGV[7] body
-- Returns 1 when written, 0 when not.
local owner = redis.call('HGET', KEYS[1], 'owner')
if ARGV[1] == '' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
elseif owner ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'COMPLETED', 'fp', ARGV[2], 'status', ARGV[4],
           'ctype', ARGV[5], 'location', ARGV[6], 'body', ARGV[7])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
