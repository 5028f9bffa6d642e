""":class:`~.call_records.CallRecords` in Redis (or Valkey), shared by every worker.

Two keys per call (``P`` is the prefix; the scripts take both keys, so a cluster needs them in
one slot: put a hash tag in the prefix)::

    P call:<key>          STRING  the record (see :mod:`.call_records`), kept ``retention`` s
    P call-lease:<key>    STRING  present while the worker running it is alive: ``lease`` s,
                                  renewed every ``lease / 3`` s while the call runs

A worker killed mid-call stops renewing its lease, and within ``lease`` seconds its record reads
as lapsed: a re-issue then learns that the outcome is unknown, rather than waiting for ever or
running the call again. Claiming is one Lua script, so two workers given the same call at once
never both run it. Waiting for a running call polls every ``poll`` seconds (a wait is rare: it
takes a re-issue that overtakes its first run).
"""

from __future__ import annotations

from typing import Final

import trio

from .call_records import RUNNING
from .redis_calls import DEFAULT_TIMEOUT, RedisClient, redis_call

__all__ = ["RedisCallRecords"]

# Claim the record when there is none; else read it, lapsed (``X``, the LAPSED record) when it
# is running without a lease.
_CLAIM: Final = """
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], 'R', 'PX', ARGV[1])
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
  return false
end
if v == 'R' and redis.call('EXISTS', KEYS[2]) == 0 then return 'X' end
return v
"""

_READ: Final = """
local v = redis.call('GET', KEYS[1])
if v == 'R' and redis.call('EXISTS', KEYS[2]) == 0 then return 'X' end
return v
"""

# Only a record still running is renewed: one that was settled meanwhile keeps its retention.
_RENEW: Final = """
if redis.call('GET', KEYS[1]) == 'R' then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
end
return 1
"""


class RedisCallRecords:
    """Call records in Redis under ``prefix`` (see the module docstring)."""

    def __init__(
        self,
        redis: RedisClient,
        *,
        prefix: str = "mcptrio:",
        retention: float = 600.0,
        lease: float = 10.0,
        max_answer_bytes: int = 1 << 20,
        poll: float = 0.2,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if retention <= 0 or lease <= 0 or poll <= 0:
            raise ValueError("retention, lease and poll must be positive")
        self.redis = redis
        self.prefix = prefix
        self.retention = retention
        self.lease = lease
        self.max_answer_bytes = max_answer_bytes
        self.poll = poll
        self.timeout = timeout
        self._claim = redis.register_script(_CLAIM)
        self._read = redis.register_script(_READ)
        self._renew = redis.register_script(_RENEW)

    def _keys(self, key: str) -> list[str]:
        return [f"{self.prefix}call:{key}", f"{self.prefix}call-lease:{key}"]

    def _times(self) -> list[int]:
        # The record outlives its lease: a lapsed run stays known as such for ``retention``.
        return [int(self.retention * 1000) + int(self.lease * 1000), int(self.lease * 1000)]

    async def claim(self, key: str) -> bytes | None:
        with redis_call("claim a call", self.timeout):
            record: object = await self._claim(keys=self._keys(key), args=self._times())
        return None if record is None else _bytes(record)

    async def renew(self, key: str) -> None:
        with redis_call("renew a call's lease", self.timeout):
            await self._renew(keys=self._keys(key), args=self._times())

    async def settle(self, key: str, record: bytes) -> None:
        keys = self._keys(key)
        with redis_call("keep a call's outcome", self.timeout):
            await self.redis.set(keys[0], record, px=int(self.retention * 1000))
            await self.redis.delete([keys[1]])

    async def release(self, key: str) -> None:
        with redis_call("forget a call", self.timeout):
            await self.redis.delete(self._keys(key))

    async def wait(self, key: str) -> bytes | None:
        while True:
            with redis_call("read a call's record", self.timeout):
                record: object = await self._read(keys=self._keys(key), args=[])
            if record is None:
                return None
            value = _bytes(record)
            if value != RUNNING:
                return value
            await trio.sleep(self.poll)


def _bytes(reply: object) -> bytes:
    if isinstance(reply, bytes | str):
        return reply.encode() if isinstance(reply, str) else reply
    raise ValueError(f"Unexpected answer from the call records' script: {reply!r}")
