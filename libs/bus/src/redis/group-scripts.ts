/**
 * Group membership and partition leases, each one atomic script on the Redis clock.
 *
 * Members keep an entry in the group's member set alive; partition i belongs to the i-th member
 * (mod count) in name order, so every member computes the same assignment. A member holds a lease
 * per partition it consumes and renews it on every heartbeat; it takes a partition only when the
 * lease is free, and gives one up (in the consumer loop) once nothing of it is in flight. So at most
 * one member consumes a partition at a time, which keeps each key's events in order.
 */

/**
 * KEYS[1] members, KEYS[2..] partition leases; ARGV[1] member, ARGV[2] ttl ms.
 * Returns per partition two numbers: held by this member now (1/0), assigned to it (1/0).
 */
export const HEARTBEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl * 10)
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
table.sort(members)
local result = {}
for i = 2, #KEYS do
  local assigned = members[((i - 2) % #members) + 1] == ARGV[1]
  local holder = redis.call('GET', KEYS[i])
  local held = 0
  if holder == ARGV[1] then
    redis.call('PEXPIRE', KEYS[i], ttl)
    held = 1
  elseif holder == false and assigned then
    redis.call('SET', KEYS[i], ARGV[1], 'PX', ttl)
    held = 1
  end
  result[#result + 1] = held
  result[#result + 1] = assigned and 1 or 0
end
return result
`;

/** KEYS[1] partition lease; ARGV[1] member. Frees the lease if this member holds it. */
export const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** KEYS[1] members, KEYS[2..] partition leases; ARGV[1] member. Leaves the group and frees its leases. */
export const LEAVE = `
redis.call('ZREM', KEYS[1], ARGV[1])
for i = 2, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('DEL', KEYS[i]) end
end
return 1
`;

/** KEYS[1] the topic's partition count key; ARGV[1] the count to record if none is. Returns the recorded count. */
export const PARTITIONS = `
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
`;
