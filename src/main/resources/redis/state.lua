-- What a key holds now: for requests waiting on an in-flight original (KeyWaiters), and for the key's lookup.
-- KEYS[1] the key's hash
-- Returns false when the key is free (released, expired, or never taken), else
--   {state, remaining_ttl_ms, path, reserved_at}   state 'PROCESSING' or 'COMPLETED'; path and reserved_at
--                                                  (epoch ms) as reserve.lua kept them, '' when absent
local r = redis.call('HMGET', KEYS[1], 'state', 'path', 'at')
if not r[1] then
  return false
end
return {r[1], tostring(redis.call('PTTL', KEYS[1])), r[2] or '', r[3] or ''}
