-- Reserve an idempotency key, or report what it already holds. One atomic round trip.
-- KEYS[1] the key's hash   ARGV[1] request fingerprint   ARGV[2] owner token   ARGV[3] lease (ms)
-- ARGV[4] the request's path   ARGV[5] now, in epoch ms (the key's lookup shows both while it is in flight)
-- Returns one of:
--   {'ACQUIRED'}                                        the caller owns the key for the lease
--                                                       (also when this owner token already held it)
--   {'COMPLETED', status, content_type, location, body, kept_until}
--                                                       the recorded answer (same fingerprint); kept_until: when
--                                                       the key stops being remembered, epoch ms ('' if not kept)
--   {'IN_PROGRESS', remaining_lease_ms}                 another request holds the lease
--   {'MISMATCH'}                                        the key belongs to another request
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  redis.call('HSET', KEYS[1], 'state', 'PROCESSING', 'fp', ARGV[1], 'owner', ARGV[2], 'path', ARGV[4], 'at', ARGV[5])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'ACQUIRED'}
end
if redis.call('HGET', KEYS[1], 'fp') ~= ARGV[1] then
  return {'MISMATCH'}
end
if state == 'COMPLETED' then
  local r = redis.call('HMGET', KEYS[1], 'status', 'ctype', 'location', 'body', 'kept_until')
  return {'COMPLETED', r[1], r[2], r[3] or '', r[4], r[5] or ''}
end
-- The same reservation sent again (a pipelined batch that failed is resent command by command,
-- RedisPipeline): the key is still the caller's.
if redis.call('HGET', KEYS[1], 'owner') == ARGV[2] then
  return {'ACQUIRED'}
end
return {'IN_PROGRESS', tostring(redis.call('PTTL', KEYS[1]))}
