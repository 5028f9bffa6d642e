"""An :class:`~.event_store.EventStore` in Redis, so that an SSE stream resumes on any worker.

The ids and the replay are those of :class:`~.event_store.InMemoryEventStore` (``"<stream
id>-<sequence>"``, the sequence counting from 1 within the stream; a replay that starts before
the oldest event held says how many it missed), so a client cannot tell the two apart. Each
store and each replay is one Lua script, atomic in Redis: the sequence comes from ``HINCRBY``,
so two processes storing on one stream get distinct, ordered ids.

Keys, per session (``{sid}`` is a hash tag, so a session's keys share a cluster slot)::

    <prefix>ev:{<sid>}:next         HASH   stream id -> last sequence given
    <prefix>ev:{<sid>}:order        LIST   the stream id of every event held, oldest first
    <prefix>ev:{<sid>}:s:<stream>   LIST   that stream's messages held, oldest first

Bounds: ``max_events_per_session`` events per session across its streams (the oldest evicted
first, as in memory), and ``ttl`` seconds since a session last stored an event, after which
Redis drops its keys (a session that ends is forgotten at once by :meth:`forget_session`).
The ``next`` hash keeps the last sequence of streams whose events were all evicted, so ids stay
unique and a late replay can say what it missed; it is bounded by the TTL.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, Final

from .event_store import Replay, UnknownEventId, parse_event_id
from .redis_calls import DEFAULT_TIMEOUT, RedisClient, redis_call

if TYPE_CHECKING:
    from coredis.commands import Script

__all__ = ["DEFAULT_EVENT_TTL", "RedisEventStore"]

#: Seconds a session's events are kept after its last event (an hour).
DEFAULT_EVENT_TTL: Final = 3600.0

# KEYS: next, order, stream list; ARGV: stream id, message, max events, ttl ms, key base.
_STORE = """
local seq = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('RPUSH', KEYS[3], ARGV[2])
local held = redis.call('RPUSH', KEYS[2], ARGV[1])
local ttl = tonumber(ARGV[4])
if held > tonumber(ARGV[3]) then
  local evicted = redis.call('LPOP', KEYS[2])
  local evicted_key = ARGV[5] .. evicted
  redis.call('LPOP', evicted_key)
end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
return seq
"""

# KEYS: next, stream list; ARGV: stream id, seq asked after.
# Returns false for an unknown id, else {missed, message...}.
_REPLAY = """
local last = redis.call('HGET', KEYS[1], ARGV[1])
local after = tonumber(ARGV[2])
if not last or after > tonumber(last) then
  return false
end
last = tonumber(last)
local held = redis.call('LLEN', KEYS[2])
local first = last - held + 1
local start = math.max(after + 1 - first, 0)
local reply = {math.max(first - (after + 1), 0), first + start}
local messages = redis.call('LRANGE', KEYS[2], start, -1)
for i = 1, #messages do
  reply[#reply + 1] = messages[i]
end
return reply
"""

# KEYS: next, order; ARGV: key base of the stream lists.
_FORGET = """
local streams = redis.call('HKEYS', KEYS[1])
for i = 1, #streams do
  redis.call('DEL', ARGV[1] .. streams[i])
end
redis.call('DEL', KEYS[1], KEYS[2])
return #streams
"""


@dataclass(eq=False)
class RedisEventStore:
    """An :class:`~.event_store.EventStore` shared by every worker through Redis (see the
    module docstring for the keys and bounds).

    Every method is one round trip under ``timeout`` seconds, and raises
    :class:`~.redis_calls.StoreUnavailable` when Redis does not answer in time or fails.
    """

    redis: RedisClient
    _: KW_ONLY
    prefix: str = "mcptrio:"
    max_events_per_session: int = 4096
    ttl: float = DEFAULT_EVENT_TTL
    timeout: float = DEFAULT_TIMEOUT
    _store: Script[bytes] = field(init=False, repr=False)
    _replay: Script[bytes] = field(init=False, repr=False)
    _forget: Script[bytes] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_events_per_session < 1:
            raise ValueError("max_events_per_session must be at least 1")
        if self.ttl <= 0:
            raise ValueError("ttl must be positive")
        self._store = self.redis.register_script(_STORE)
        self._replay = self.redis.register_script(_REPLAY)
        self._forget = self.redis.register_script(_FORGET)

    def _base(self, session_id: str) -> str:
        return f"{self.prefix}ev:{{{session_id}}}:"

    async def store(self, session_id: str, stream_id: str, message: bytes) -> str:
        base = self._base(session_id)
        with redis_call("store an SSE event", self.timeout):
            seq: Any = await self._store(
                [f"{base}next", f"{base}order", f"{base}s:{stream_id}"],
                [
                    stream_id,
                    message,
                    self.max_events_per_session,
                    int(self.ttl * 1000),
                    f"{base}s:",
                ],
            )
        return f"{stream_id}-{seq}"

    async def replay_after(self, session_id: str, last_event_id: str) -> Replay:
        stream_id, seq = parse_event_id(last_event_id)
        base = self._base(session_id)
        with redis_call("replay SSE events", self.timeout):
            reply: Any = await self._replay(
                [f"{base}next", f"{base}s:{stream_id}"], [stream_id, seq]
            )
        if not isinstance(reply, list):
            raise UnknownEventId(last_event_id)
        missed, first, *messages = reply
        assert isinstance(missed, int) and isinstance(first, int)
        events = [(f"{stream_id}-{first + i}", bytes(m)) for i, m in enumerate(messages)]
        return Replay(stream_id, events, missed)

    async def forget_session(self, session_id: str) -> None:
        base = self._base(session_id)
        with redis_call("forget a session's SSE events", self.timeout):
            await self._forget([f"{base}next", f"{base}order"], [f"{base}s:"])

    async def event_count(self, session_id: str) -> int:
        """How many events are held for ``session_id``."""
        with redis_call("count SSE events", self.timeout):
            return await self.redis.llen(f"{self._base(session_id)}order")
