-- Give a reservation back after a failure before commit, so that a retry executes afresh.
-- Only the owner may release (a request whose lease expired must not free a newer owner's key).
-- KEYS[1] the key's hash   ARGV[1] owner token
-- ARGV[2] the channel that wakes requests waiting on the key (KeyWaiters): one of them may take it
-- Returns 1 when released, 0 when the key was not the caller's.
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] and
   redis.call('HGET', KEYS[1], 'state') == 'PROCESSING' then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], KEYS[1])
  return 1
end
return 0
