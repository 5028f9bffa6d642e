"""The session directory on Redis (or Valkey); see :mod:`.session_directory` for the design."""

from __future__ import annotations

import contextlib
from typing import Any, Final, cast

import trio
from coredis.tokens import PureToken

from .redis_calls import redis_call
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
#: Messages, and bytes, that may wait for one mailbox's next push; past them ``send`` fails
#: (Redis is too slow for this worker's traffic: as if it were unavailable).
MAX_PENDING: Final = 4096
MAX_PENDING_BYTES: Final = 64 * 1024 * 1024
# Appends a batch to a mailbox and gives the mailbox its lifetime in the same round trip, so
# that a mailbox written to after its owner died still goes away (the owner's heartbeat is what
# otherwise keeps it expiring).
_PUSH = b"""
local length = redis.call('RPUSH', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return length
"""


def _redis_call(
    what: str, seconds: float = COMMAND_DEADLINE
) -> contextlib.AbstractContextManager[None]:
    """A Redis call of the directory: its failures are :class:`DirectoryUnavailable`."""
    return redis_call(what, seconds, error=DirectoryUnavailable)


class _Batch:
    """Messages for one mailbox that go out in one push, and its outcome."""

    __slots__ = ("done", "error", "length", "messages", "size")

    def __init__(self) -> None:
        self.messages: list[bytes] = []
        self.size = 0
        self.done = trio.Event()
        self.length = 0
        self.error: str | None = None


class _Outbox:
    """The batch filling up for a mailbox while the previous one is pushed."""

    __slots__ = ("filling", "pushing")

    def __init__(self) -> None:
        self.filling = _Batch()
        self.pushing = False


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
        self._asking: dict[str, trio.Event] = {}
        self._outboxes: dict[str, _Outbox] = {}
        self._nursery: trio.Nursery | None = None
        self._left = False
        # Held by a refresh of this worker's key, and by leaving: a refresh on its way never
        # puts the key back after the worker left.
        self._liveness = trio.Lock()
        self._push = redis.register_script(_PUSH)
        #: Pushes and pops made, and the messages they carried (batching's measure).
        self.pushes = self.pushed = self.pops = self.popped = 0

    @property
    def instance(self) -> str:
        return self._instance

    def _live_key(self, instance: str) -> str:
        return f"{self._prefix}worker:{instance}"

    def _mailbox(self, instance: str) -> str:
        return f"{self._prefix}mailbox:{instance}"

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        await self._refresh()
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                try:
                    task_status.started()
                    await self._heartbeat()
                finally:
                    # From here on a message goes out by itself (send's lone push): the
                    # nursery, waiting for the pushes under way, closes to new tasks when
                    # they end, before this task resumes.
                    self._nursery = None
        finally:
            with (
                trio.CancelScope(shield=True),
                contextlib.suppress(DirectoryUnavailable),
                _redis_call("leave the directory", 1.0),
            ):
                await self._redis.delete([self._live_key(self._instance)])

    async def leave(self) -> None:
        async with self._liveness:
            self._left = True
            with _redis_call("leave the directory"):
                await self._redis.delete([self._live_key(self._instance)])

    async def _heartbeat(self) -> None:
        while not self._left:
            await trio.sleep(HEARTBEAT_PERIOD)
            try:
                await self._refresh()
            except DirectoryUnavailable:
                # Redis is away: keep trying. Past LIVENESS_TTL the others count this
                # instance as gone, which is what it is to them until Redis is back.
                continue

    async def _refresh(self) -> None:
        ttl_ms = int(LIVENESS_TTL * 1000)
        async with self._liveness:
            if not self._left:
                await self._set_alive(ttl_ms)

    async def _set_alive(self, ttl_ms: int) -> None:
        with _redis_call("refresh this worker's liveness"):
            await self._redis.set(self._live_key(self._instance), b"1", px=ttl_ms)
            # A mailbox outlives its instance by a margin, then goes with whatever no one
            # will read.
            await self._redis.pexpire(self._mailbox(self._instance), ttl_ms * 12)

    async def is_alive(self, instance: str) -> bool:
        if instance == self._instance:
            return True
        while True:
            cached = self._alive.get(instance)
            if cached is not None and trio.current_time() - cached[0] < _ALIVE_CACHE:
                return cached[1]
            # One question to Redis at a time per instance: the exchanges that ask meanwhile
            # (a burst of them, when the answer expires under load) wait for its answer.
            asking = self._asking.get(instance)
            if asking is None:
                break
            await asking.wait()
            if instance not in self._alive:
                break  # That question failed: ask again, and fail likewise if Redis is away.
        asking = self._asking[instance] = trio.Event()
        try:
            with _redis_call("ask whether a worker is alive"):
                alive = bool(await self._redis.exists([self._live_key(instance)]))
            if len(self._alive) >= _ALIVE_CACHE_SIZE:
                self._alive.clear()
            self._alive[instance] = (trio.current_time(), alive)
            return alive
        finally:
            del self._asking[instance]
            asking.set()

    async def send(self, instance: str, message: bytes) -> int:
        """Append ``message`` to ``instance``'s mailbox.

        Messages for one mailbox go out in batches, one push each, while :meth:`run` runs: the
        messages sent while a push is on its way wait for it, then go together. A push per
        message cost the forwarding path most of its time (a coredis command costs far more
        than the few bytes it carries: profiled at a third of a forwarded call's CPU); under
        load the batches grow and the cost per message falls. A lone message waits for no one.
        """
        if self._nursery is None:
            return await self._push_batch(instance, [message])
        outbox = self._outboxes.get(instance)
        if outbox is None:
            outbox = self._outboxes[instance] = _Outbox()
        batch = outbox.filling
        if len(batch.messages) >= MAX_PENDING or batch.size + len(message) > MAX_PENDING_BYTES:
            raise DirectoryUnavailable("Redis does not keep up: too many messages wait for it")
        batch.messages.append(message)
        batch.size += len(message)
        if not outbox.pushing:
            outbox.pushing = True
            self._nursery.start_soon(self._drain, instance, outbox)
        await batch.done.wait()
        if batch.error is not None:
            raise DirectoryUnavailable(batch.error)
        return batch.length

    async def _drain(self, instance: str, outbox: _Outbox) -> None:
        """Push ``outbox``'s batches one after the other until none is left."""
        try:
            while outbox.filling.messages:
                batch, outbox.filling = outbox.filling, _Batch()
                try:
                    batch.length = await self._push_batch(instance, batch.messages)
                except DirectoryUnavailable as exc:
                    batch.error = str(exc)
                except BaseException:
                    batch.error = "the session directory has stopped"
                    raise
                finally:
                    batch.done.set()
        finally:
            outbox.pushing = False
            if outbox.filling.messages:
                # Cancelled (the directory stops): what is left will not be sent.
                outbox.filling.error = "the session directory has stopped"
                outbox.filling.done.set()
            if self._outboxes.get(instance) is outbox:
                del self._outboxes[instance]

    async def _push_batch(self, instance: str, messages: list[bytes]) -> int:
        ttl_ms = int(LIVENESS_TTL * 1000) * 12
        with _redis_call("forward to a worker's mailbox"):
            length = await self._push(keys=[self._mailbox(instance)], args=[ttl_ms, *messages])
        self.pushes += 1
        self.pushed += len(messages)
        return int(length)

    async def receive(self) -> list[bytes]:
        key = self._mailbox(self._instance)
        while True:
            # A short blocking pop, issued again and again: a dead Redis is noticed by the
            # deadline rather than by a read that never ends. BLMPOP (Redis 7.0, Valkey 7.2)
            # takes what has queued up to _BATCH in the same round trip.
            with _redis_call("read the mailbox", COMMAND_DEADLINE + _BLOCK):
                popped = await self._redis.blmpop([key], _BLOCK, PureToken.LEFT, _BATCH)
            if popped is None:
                continue
            messages = cast("list[bytes]", popped[1])
            self.pops += 1
            self.popped += len(messages)
            return messages
