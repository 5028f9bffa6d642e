"""Session records on Redis (or Valkey); see :mod:`.session_records` for the design.

A record is a hash at ``<prefix>session:<id>`` (``state``, ``owner``, ``subject``, ``issuer``)
with a TTL. Writing, claiming and forgetting each check the owner in a script, in the same
round trip as the change: a worker that has lost a session (claimed while Redis counted it
gone) cannot take it back or delete it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from .redis_calls import redis_call
from .session_records import SessionRecord

__all__ = ["RedisSessionRecords"]

#: Records refreshed per round trip.
_REFRESH_BATCH: Final = 256

_SAVE = b"""
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner and owner ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'state', ARGV[2], 'subject', ARGV[3],
           'issuer', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
"""
_CLAIM = b"""
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""
_REFRESH = b"""
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[1]) end
return 1
"""
_FORGET = b"""
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
"""


def _ms(seconds: float) -> int:
    return max(int(seconds * 1000), 1)


def _text(value: Any) -> str | None:
    return bytes(value).decode() if value else None


class RedisSessionRecords:
    """:class:`~.session_records.SessionRecords` on Redis, through a coredis client that the
    caller owns (bytes responses); ``prefix`` namespaces the keys."""

    def __init__(self, redis: Any, *, prefix: str = "mcptrio:") -> None:
        self._redis = redis
        self._prefix = prefix
        self._save = redis.register_script(_SAVE)
        self._claim = redis.register_script(_CLAIM)
        self._refresh = redis.register_script(_REFRESH)
        self._forget = redis.register_script(_FORGET)

    def _key(self, session_id: str) -> str:
        return f"{self._prefix}session:{session_id}"

    async def save(self, session_id: str, record: SessionRecord, ttl: float) -> bool:
        args = [record.owner, record.state, record.subject or "", record.issuer or "", _ms(ttl)]
        with redis_call("save a session's record"):
            return bool(await self._save(keys=[self._key(session_id)], args=args))

    async def load(self, session_id: str) -> SessionRecord | None:
        with redis_call("read a session's record"):
            fields = await self._redis.hgetall(self._key(session_id))
        owner = fields.get(b"owner")
        state = fields.get(b"state")
        if owner is None or state is None:
            return None
        return SessionRecord(
            bytes(state),
            bytes(owner).decode(),
            _text(fields.get(b"subject")),
            _text(fields.get(b"issuer")),
        )

    async def claim(self, session_id: str, was: str, now: str, ttl: float) -> bool:
        with redis_call("claim a session"):
            claimed = await self._claim(keys=[self._key(session_id)], args=[was, now, _ms(ttl)])
        return bool(claimed)

    async def refresh(self, session_ids: Sequence[str], ttl: float) -> None:
        for start in range(0, len(session_ids), _REFRESH_BATCH):
            keys = [self._key(s) for s in session_ids[start : start + _REFRESH_BATCH]]
            with redis_call("refresh the records of live sessions"):
                await self._refresh(keys=keys, args=[_ms(ttl)])

    async def forget(self, session_id: str, owner: str) -> None:
        with redis_call("forget an ended session"):
            await self._forget(keys=[self._key(session_id)], args=[owner])
