-- Record the final answer of a committed request. Fencing: write only while the caller still
-- owns the key, or when the key is free (Redis forgot it, or the caller never got a
-- reservation). Never over another owner's reservation or answer: a request whose lease expired
-- must not overwrite a newer owner's state. Writing into a free key is always safe, because
-- the answer is already committed in Postgres, which a retry would replay anyway.
-- KEYS[1] the key's hash   ARGV[1] owner token   ARGV[2] fingerprint   ARGV[3] retention (ms)
-- ARGV[4] status   ARGV[5] content type   ARGV[6] location ('' when none)   ARGV[7] body
-- ARGV[8] the channel that wakes requests waiting on the key (KeyWaiters)
-- ARGV[9] when the key stops being remembered (the durable record's expiry), epoch ms ('' when unknown)
-- Returns 1 when written, 0 when not.
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'COMPLETED', 'fp', ARGV[2], 'status', ARGV[4],
           'ctype', ARGV[5], 'location', ARGV[6], 'body', ARGV[7], 'kept_until', ARGV[9])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', ARGV[8], KEYS[1])
return 1
