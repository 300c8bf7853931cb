-- What a key holds now, for requests waiting on an in-flight original (KeyWaiters): 'PROCESSING'
-- or 'COMPLETED', or false when the key is free (released, expired, or never taken).
-- KEYS[1] the key's hash
return redis.call('HGET', KEYS[1], 'state')
