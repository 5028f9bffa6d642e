"""The Lua scripts behind :class:`~.redis_task_store.RedisTaskStore`: every decision in one place.

Each script runs atomically in Redis, so what two workers do to one task (a cancel on one, the
completion on another) is ordered, and the loser sees the winner's record. Each begins by
purging up to a batch of expired records, on Redis's clock (``TIME``), so expiry agrees
between workers whatever their own clocks say. Keys (``P`` is the prefix, passed as ``ARGV[1]``;
the scripts name their keys from it, so the store needs a standalone Redis or Valkey, or every
key in one cluster slot: put a hash tag in the prefix, ``"{mcptrio}:"``)::

    P task:<id>               HASH  static, mutable (msgpack), status, version, owner, seq,
                                    size, deadline (ms since the epoch, "inf" for none)
    P tasks:seq               STRING  creation counter (the order tasks/list pages follow)
    P tasks:all               ZSET  id -> deadline: every record, expiry first
    P tasks:finished          ZSET  id -> deadline: terminal records, eviction order
    P tasks:owner:<owner>     ZSET  id -> seq: an owner's records, for tasks/list
    P tasks:unfinished:<owner>  SET ids of an owner's unfinished records (its limit)
    P tasks:bytes             STRING  outcome and input bytes held (max_bytes bounds it)
    P tasks:changed           channel: "<id>" after every change of a record

Every script returns an error status as a plain string (``"exists"``, ``"limit"``, ``"full"``,
``"too-large"``) for the store to raise as the exception the memory store raises.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CREATE", "DELETE", "GET", "LIST", "PURGE", "TRANSITION"]

_COMMON: Final = """
local P = ARGV[1]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function drop(id)
  local key = P .. 'task:' .. id
  local fields = redis.call('HMGET', key, 'owner', 'size')
  local existed = redis.call('DEL', key)
  redis.call('ZREM', P .. 'tasks:all', id)
  redis.call('ZREM', P .. 'tasks:finished', id)
  if fields[1] then
    redis.call('ZREM', P .. 'tasks:owner:' .. fields[1], id)
    redis.call('SREM', P .. 'tasks:unfinished:' .. fields[1], id)
    redis.call('DECRBY', P .. 'tasks:bytes', tonumber(fields[2]) or 0)
  end
  if existed == 1 then
    redis.call('PUBLISH', P .. 'tasks:changed', id)
  end
end
local function purge(now, batch)
  local ids = redis.call('ZRANGEBYSCORE', P .. 'tasks:all', '-inf', now, 'LIMIT', 0, batch)
  for i = 1, #ids do
    drop(ids[i])
  end
  return #ids
end
local function live(key, now)
  local deadline = redis.call('HGET', key, 'deadline')
  return deadline and (deadline == 'inf' or tonumber(deadline) > now)
end
-- Redis's time, once up to batch expired records are gone (every script begins so).
local function purged_now(batch)
  local now = now_ms()
  purge(now, batch)
  return now
end
-- After the purge: the key of record id, or nil when it has none (or it has expired).
local function live_key(id, batch)
  local now = purged_now(batch)
  local key = P .. 'task:' .. id
  if live(key, now) then
    return key
  end
  return nil
end
-- Evicts finished records (never keep) until records more records and size more bytes fit;
-- returns the status that refuses them ('too-large', 'full'), or nil once they fit.
local function make_room(records, size, keep, max_tasks, max_bytes)
  if size > max_bytes then
    return 'too-large'
  end
  local count = redis.call('ZCARD', P .. 'tasks:all')
  local bytes = tonumber(redis.call('GET', P .. 'tasks:bytes') or '0')
  while count + records > max_tasks or bytes + size > max_bytes do
    local victims = redis.call('ZRANGE', P .. 'tasks:finished', 0, 1)
    local victim = victims[1]
    if victim == keep then
      victim = victims[2]
    end
    if not victim then
      return 'full'
    end
    local freed = tonumber(redis.call('HGET', P .. 'task:' .. victim, 'size') or '0')
    drop(victim)
    count = count - 1
    bytes = bytes - freed
  end
  return nil
end
local function record(key)
  return redis.call('HMGET', key, 'static', 'mutable', 'version', 'seq')
end
local TERMINAL = {completed = true, failed = true, cancelled = true}
"""

# ARGV: P, id, owner, static, mutable, status, size, ttl ms ("" none), max unfinished ("" none),
# max tasks, max bytes, batch.
CREATE: Final = (
    _COMMON
    + """
local id, owner, size = ARGV[2], ARGV[3], tonumber(ARGV[7])
local now = purged_now(tonumber(ARGV[12]))
local key = P .. 'task:' .. id
if redis.call('EXISTS', key) == 1 then
  return 'exists'
end
local unfinished = P .. 'tasks:unfinished:' .. owner
if ARGV[9] ~= '' and redis.call('SCARD', unfinished) >= tonumber(ARGV[9]) then
  return 'limit'
end
local refused = make_room(1, size, nil, tonumber(ARGV[10]), tonumber(ARGV[11]))
if refused then
  return refused
end
local seq = redis.call('INCR', P .. 'tasks:seq')
local deadline = 'inf'
if ARGV[8] ~= '' then
  deadline = tostring(now + tonumber(ARGV[8]))
end
redis.call('HSET', key, 'static', ARGV[4], 'mutable', ARGV[5], 'status', ARGV[6],
  'version', 1, 'owner', owner, 'seq', seq, 'size', size, 'deadline', deadline)
local score = deadline == 'inf' and '+inf' or deadline
redis.call('ZADD', P .. 'tasks:all', score, id)
redis.call('ZADD', P .. 'tasks:owner:' .. owner, seq, id)
if TERMINAL[ARGV[6]] then
  redis.call('ZADD', P .. 'tasks:finished', score, id)
else
  redis.call('SADD', unfinished, id)
end
redis.call('INCRBY', P .. 'tasks:bytes', size)
return seq
"""
)

# ARGV: P, id, batch. Returns {static, mutable, version, seq} or false.
GET: Final = (
    _COMMON
    + """
local key = live_key(ARGV[2], tonumber(ARGV[3]))
if not key then
  return false
end
return record(key)
"""
)

# ARGV: P, id, status, mutable, size, max tasks, max bytes, batch.
# Returns {static, mutable, version, seq} as it is afterwards, false, or an error status.
TRANSITION: Final = (
    _COMMON
    + """
local id, status, size = ARGV[2], ARGV[3], tonumber(ARGV[5])
local key = live_key(id, tonumber(ARGV[8]))
if not key then
  return false
end
local current = redis.call('HMGET', key, 'status', 'size', 'owner', 'deadline')
if TERMINAL[current[1]] then
  return record(key)
end
local grow = size - tonumber(current[2])
if grow > 0 then
  local refused = make_room(0, grow, id, tonumber(ARGV[6]), tonumber(ARGV[7]))
  if refused then
    return refused
  end
end
redis.call('HINCRBY', key, 'version', 1)
redis.call('HSET', key, 'status', status, 'mutable', ARGV[4], 'size', size)
redis.call('INCRBY', P .. 'tasks:bytes', grow)
if TERMINAL[status] then
  redis.call('SREM', P .. 'tasks:unfinished:' .. current[3], id)
  local score = current[4] == 'inf' and '+inf' or current[4]
  redis.call('ZADD', P .. 'tasks:finished', score, id)
end
redis.call('PUBLISH', P .. 'tasks:changed', id)
return record(key)
"""
)

# ARGV: P, owner, after seq, limit, batch. Returns {more (0/1), record, record...}.
LIST: Final = (
    _COMMON
    + """
purged_now(tonumber(ARGV[5]))
local limit = tonumber(ARGV[4])
local ids = redis.call('ZRANGEBYSCORE', P .. 'tasks:owner:' .. ARGV[2], '(' .. ARGV[3], '+inf',
  'LIMIT', 0, limit + 1)
local reply = {0}
for i = 1, #ids do
  if i > limit then
    reply[1] = 1
    break
  end
  reply[#reply + 1] = record(P .. 'task:' .. ids[i])
end
return reply
"""
)

# ARGV: P, id.
DELETE: Final = (
    _COMMON
    + """
drop(ARGV[2])
return 1
"""
)

# ARGV: P, batch. Returns how many records it dropped (at most batch).
PURGE: Final = (
    _COMMON
    + """
return purge(now_ms(), tonumber(ARGV[2]))
"""
)
