"""A :class:`~.task_store.TaskStore` in Redis: a task made on one worker is read, listed, updated
and cancelled from any other.

Every method is one Lua script (:mod:`.redis_task_scripts`), so creation under the owner's limit
and every transition are atomic across workers, and the bounds are those of
:class:`~.task_store.MemoryTaskStore`: ``max_unfinished_per_owner`` per principal or session,
``max_tasks`` records and ``max_bytes`` of outcomes in all, finished records nearest their
expiry evicted first. TTLs are measured on Redis's clock.

**Changes across workers.** Every write publishes the task's id on one channel. :meth:`run`
(started by :func:`open_redis_task_store`) is this process's one subscriber: it wakes the local
:meth:`~RedisTaskStore.wait_for_change` waiters of that id, which read the record again. So a
``tasks/cancel`` answered on worker B reaches the task's actor on worker A: the supervisor's
watcher there is such a waiter, sees ``cancelled``, and cancels the actor's scope. A message
lost while the subscriber was disconnected is made up for twice: on resubscribing every waiter
reads again, and a waiter reads again every ``poll_interval`` seconds whatever it heard.

Every call runs under ``timeout`` seconds and raises
:class:`~.redis_calls.StoreUnavailable` when Redis fails or does not answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec
import trio

from ..protocol.types.tasks import TaskStatus
from . import redis_task_scripts as scripts
from .redis_calls import (
    DEFAULT_TIMEOUT,
    RedisClient,
    follow_channel,
    redis_call,
    unwrapped,
)
from .task_store import (
    TaskLimitReached,
    TaskPage,
    TaskRecord,
    TaskStoreFull,
    _make_cursor,
    _read_cursor,
    now_iso,
)

if TYPE_CHECKING:
    from coredis.commands import Script

__all__ = ["DEFAULT_POLL_INTERVAL", "RedisTaskStore", "open_redis_task_store"]

#: Seconds a change waiter waits for a notification before it reads the record again anyway.
DEFAULT_POLL_INTERVAL: Final = 5.0
# Expired records a call purges before its own work (purge_expired purges them all).
_PURGE_BATCH: Final = 64


class _Static(msgspec.Struct, array_like=True, frozen=True):
    task_id: str
    owner: str
    method: str
    created_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None


class _Mutable(msgspec.Struct, array_like=True, frozen=True):
    status: TaskStatus
    status_message: str | None
    last_updated_at: str
    result: bytes | None
    error: bytes | None
    input_requests: bytes | None
    input_responses: bytes | None


_encode = msgspec.msgpack.Encoder().encode
_decode_static = msgspec.msgpack.Decoder(_Static).decode
_decode_mutable = msgspec.msgpack.Decoder(_Mutable).decode


def _mutable_of(record: TaskRecord) -> bytes:
    return _encode(
        _Mutable(
            record.status,
            record.status_message,
            record.last_updated_at,
            record.result,
            record.error,
            record.input_requests,
            record.input_responses,
        )
    )


def _record(reply: Any) -> tuple[TaskRecord, int]:
    """A record and its creation sequence from a script's ``{static, mutable, version, seq}``."""
    static_raw, mutable_raw, version, seq = reply
    static = _decode_static(static_raw)
    mutable = _decode_mutable(mutable_raw)
    record = TaskRecord(
        task_id=static.task_id,
        owner=static.owner,
        method=static.method,
        status=mutable.status,
        created_at=static.created_at,
        last_updated_at=mutable.last_updated_at,
        ttl_ms=static.ttl_ms,
        poll_interval_ms=static.poll_interval_ms,
        status_message=mutable.status_message,
        version=int(version),
        result=mutable.result,
        error=mutable.error,
        input_requests=mutable.input_requests,
        input_responses=mutable.input_responses,
    )
    return record, int(seq)


def _check(reply: Any) -> None:
    """Raise what a script's error status means."""
    if isinstance(reply, bytes):
        status = reply.decode()
        if status == "limit":
            raise TaskLimitReached("The requestor has all the unfinished tasks it may have")
        if status == "full":
            raise TaskStoreFull("The task store is full of unfinished tasks")
        if status == "too-large":
            raise TaskStoreFull("The task's outcome is larger than the task store")
        if status == "exists":
            raise ValueError("A task with this id exists already")
        raise ValueError(f"Unexpected answer from the task store's script: {status!r}")


@dataclass(eq=False)
class RedisTaskStore:
    """A :class:`~.task_store.TaskStore` shared by every worker through Redis (see the module
    docstring). Use it through :func:`open_redis_task_store`, which runs the change
    subscriber; without it, :meth:`wait_for_change` still works, by polling alone."""

    redis: RedisClient
    _: KW_ONLY
    prefix: str = "mcptrio:"
    max_tasks: int = 10_000
    max_bytes: int = 64 << 20
    timeout: float = DEFAULT_TIMEOUT
    poll_interval: float = DEFAULT_POLL_INTERVAL
    #: The Redis channel a change to any task is announced on.
    channel: str = field(init=False)
    _create: Script[bytes] = field(init=False, repr=False)
    _get: Script[bytes] = field(init=False, repr=False)
    _transition: Script[bytes] = field(init=False, repr=False)
    _list: Script[bytes] = field(init=False, repr=False)
    _delete: Script[bytes] = field(init=False, repr=False)
    _purge: Script[bytes] = field(init=False, repr=False)
    # The local waiters of wait_for_change, by task id; a notification sets and drops them.
    _waiters: dict[str, set[trio.Event]] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_tasks < 1 or self.max_bytes < 1:
            raise ValueError("max_tasks and max_bytes must be at least 1")
        self.channel = f"{self.prefix}tasks:changed"
        self._create = self.redis.register_script(scripts.CREATE)
        self._get = self.redis.register_script(scripts.GET)
        self._transition = self.redis.register_script(scripts.TRANSITION)
        self._list = self.redis.register_script(scripts.LIST)
        self._delete = self.redis.register_script(scripts.DELETE)
        self._purge = self.redis.register_script(scripts.PURGE)

    # ------------------------------------------------------------------ the interface

    async def create(
        self, record: TaskRecord, *, max_unfinished_per_owner: int | None = None
    ) -> TaskRecord:
        record = msgspec.structs.replace(record, version=1)
        static = _Static(
            record.task_id,
            record.owner,
            record.method,
            record.created_at,
            record.ttl_ms,
            record.poll_interval_ms,
        )
        with redis_call("create a task", self.timeout):
            reply: Any = await self._create(
                args=[
                    self.prefix,
                    record.task_id,
                    record.owner,
                    _encode(static),
                    _mutable_of(record),
                    record.status,
                    record.size(),
                    "" if record.ttl_ms is None else record.ttl_ms,
                    "" if max_unfinished_per_owner is None else max_unfinished_per_owner,
                    self.max_tasks,
                    self.max_bytes,
                    _PURGE_BATCH,
                ]
            )
        _check(reply)
        return record

    async def get(self, task_id: str) -> TaskRecord | None:
        with redis_call("read a task", self.timeout):
            reply: Any = await self._get(args=[self.prefix, task_id, _PURGE_BATCH])
        return None if not isinstance(reply, list) else _record(reply)[0]

    async def transition(
        self,
        task_id: str,
        status: TaskStatus,
        *,
        status_message: str | None = None,
        result: bytes | None = None,
        error: bytes | None = None,
        input_requests: bytes | None = None,
        input_responses: bytes | None = None,
    ) -> TaskRecord | None:
        mutable = _Mutable(
            status,
            status_message,
            now_iso(),
            result,
            error,
            input_requests,
            input_responses,
        )
        size = sum(len(b or b"") for b in (result, error, input_requests, input_responses))
        with redis_call("update a task", self.timeout):
            reply: Any = await self._transition(
                args=[
                    self.prefix,
                    task_id,
                    status,
                    _encode(mutable),
                    size,
                    self.max_tasks,
                    self.max_bytes,
                    _PURGE_BATCH,
                ]
            )
        _check(reply)
        return None if not isinstance(reply, list) else _record(reply)[0]

    async def wait_for_change(self, task_id: str, version: int) -> TaskRecord | None:
        while True:
            # Registered before the read, so that a change between the two still wakes us.
            event = trio.Event()
            waiters = self._waiters.setdefault(task_id, set())
            waiters.add(event)
            try:
                record = await self.get(task_id)
                if record is None or record.version != version:
                    return record
                with trio.move_on_after(self.poll_interval):
                    await event.wait()
            finally:
                waiters.discard(event)
                if not waiters and self._waiters.get(task_id) is waiters:
                    del self._waiters[task_id]

    async def list(self, owner: str, cursor: str | None, limit: int) -> TaskPage:
        after = 0 if cursor is None else _read_cursor(cursor, owner)
        with redis_call("list tasks", self.timeout):
            reply: Any = await self._list(args=[self.prefix, owner, after, limit, _PURGE_BATCH])
        assert isinstance(reply, list)
        more, *rows = reply
        records: list[TaskRecord] = []
        last_seq = after
        for row in rows:
            if isinstance(row, list) and row[0] is not None:
                record, last_seq = _record(row)
                records.append(record)
        return TaskPage(records, _make_cursor(owner, last_seq) if more else None)

    async def delete(self, task_id: str) -> None:
        with redis_call("delete a task", self.timeout):
            await self._delete(args=[self.prefix, task_id])

    async def purge_expired(self) -> int:
        dropped = 0
        while True:
            with redis_call("purge expired tasks", self.timeout):
                batch: Any = await self._purge(args=[self.prefix, 1000])
            assert isinstance(batch, int)
            dropped += batch
            if batch < 1000:
                return dropped

    async def count(self) -> int:
        """How many records are held (expired ones not purged yet included)."""
        with redis_call("count tasks", self.timeout):
            return await self.redis.zcard(f"{self.prefix}tasks:all")

    # ------------------------------------------------------------------ notifications

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Subscribe to the change channel and wake this process's waiters, until cancelled.
        Reconnects by itself after Redis comes back; every waiter then reads again."""
        await follow_channel(
            self.redis,
            self.channel,
            lambda data: self._wake(data.decode()),
            self._wake_all,
            task_status=task_status,
        )

    def _wake(self, task_id: str) -> None:
        for event in self._waiters.pop(task_id, ()):
            event.set()

    def _wake_all(self) -> None:
        waiters, self._waiters = self._waiters, {}
        for events in waiters.values():
            for event in events:
                event.set()


@asynccontextmanager
async def open_redis_task_store(
    redis: RedisClient, **options: Any
) -> AsyncIterator[RedisTaskStore]:
    """A :class:`RedisTaskStore` (``options`` are its keyword arguments) with its change
    subscriber running for the ``async with`` block."""
    store = RedisTaskStore(redis, **options)
    try:
        async with trio.open_nursery() as nursery:
            with redis_call("subscribe to task changes", store.timeout):
                await nursery.start(store.run)
            yield store
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        raise unwrapped(group) from None
