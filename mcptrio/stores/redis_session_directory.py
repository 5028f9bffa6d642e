"""The session directory on Redis (or Valkey); see :mod:`.session_directory` for the design."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Final

import anyio
import coredis.exceptions
import trio

from .session_directory import (
    HEARTBEAT_PERIOD,
    LIVENESS_TTL,
    DirectoryUnavailable,
    new_instance_name,
)

__all__ = ["RedisSessionDirectory"]

#: Seconds a liveness answer is reused: forwarding asks once per exchange and while it waits.
_ALIVE_CACHE: Final = 0.5
#: The longest any one Redis command may take before the directory reports it unavailable.
COMMAND_DEADLINE: Final = 5.0
#: Seconds a blocking pop waits on the server before it is issued again.
_BLOCK: Final = 1
#: Messages taken from the mailbox per round trip once one has arrived.
_BATCH: Final = 128
#: How long the liveness keys of others are cached at most (entries).
_ALIVE_CACHE_SIZE: Final = 1024
# coredis runs on anyio: a connection closed under it raises anyio's errors.
_REDIS_ERRORS = (
    coredis.exceptions.RedisError,
    OSError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
)


@contextlib.contextmanager
def _redis_call(seconds: float = COMMAND_DEADLINE) -> Iterator[None]:
    """Turn a Redis failure, or no answer within ``seconds``, into :class:`DirectoryUnavailable`
    (never a hang: every wait on Redis has this deadline)."""
    try:
        with trio.fail_after(seconds):
            yield
    except trio.TooSlowError:
        raise DirectoryUnavailable(f"Redis did not answer within {seconds:g} s") from None
    except _REDIS_ERRORS as exc:
        raise DirectoryUnavailable(f"Redis: {exc}") from exc


class RedisSessionDirectory:
    """:class:`~.session_directory.SessionDirectory` on Redis, through a coredis client.

    ``redis`` is an open ``coredis.Redis`` (bytes responses) that the caller owns; ``prefix``
    namespaces the keys, so that several deployments can share one Redis. ``instance`` is drawn
    fresh (:func:`~.session_directory.new_instance_name`) unless given.
    """

    def __init__(
        self, redis: Any, *, instance: str | None = None, prefix: str = "mcptrio:"
    ) -> None:
        self._redis = redis
        self._instance = instance if instance is not None else new_instance_name()
        self._prefix = prefix
        self._alive: dict[str, tuple[float, bool]] = {}

    @property
    def instance(self) -> str:
        return self._instance

    def _live_key(self, instance: str) -> str:
        return f"{self._prefix}worker:{instance}"

    def _mailbox(self, instance: str) -> str:
        return f"{self._prefix}mailbox:{instance}"

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        await self._refresh()
        task_status.started()
        try:
            while True:
                await trio.sleep(HEARTBEAT_PERIOD)
                try:
                    await self._refresh()
                except DirectoryUnavailable:
                    # Redis is away: keep trying. Past LIVENESS_TTL the others count this
                    # instance as gone, which is what it is to them until Redis is back.
                    continue
        finally:
            with (
                trio.CancelScope(shield=True),
                contextlib.suppress(DirectoryUnavailable),
                _redis_call(1.0),
            ):
                await self._redis.delete([self._live_key(self._instance)])

    async def _refresh(self) -> None:
        ttl_ms = int(LIVENESS_TTL * 1000)
        with _redis_call():
            await self._redis.set(self._live_key(self._instance), b"1", px=ttl_ms)
            # A mailbox outlives its instance by a margin, then goes with whatever no one
            # will read.
            await self._redis.pexpire(self._mailbox(self._instance), ttl_ms * 12)

    async def is_alive(self, instance: str) -> bool:
        if instance == self._instance:
            return True
        now = trio.current_time()
        cached = self._alive.get(instance)
        if cached is not None and now - cached[0] < _ALIVE_CACHE:
            return cached[1]
        with _redis_call():
            alive = bool(await self._redis.exists([self._live_key(instance)]))
        if len(self._alive) >= _ALIVE_CACHE_SIZE:
            self._alive.clear()
        self._alive[instance] = (now, alive)
        return alive

    async def send(self, instance: str, message: bytes) -> int:
        with _redis_call():
            length: int = await self._redis.rpush(self._mailbox(instance), [message])
        return length

    async def receive(self) -> list[bytes]:
        key = self._mailbox(self._instance)
        while True:
            # A short blocking pop, issued again and again: a dead Redis is noticed by the
            # deadline rather than by a read that never ends.
            with _redis_call(COMMAND_DEADLINE + _BLOCK):
                popped = await self._redis.blpop([key], timeout=_BLOCK)
            if popped is None:
                continue
            messages: list[bytes] = [popped[1]]
            with _redis_call():
                more = await self._redis.lpop(key, _BATCH)
            if more:
                messages.extend(more)
            return messages
