"""One URL for every store a server shares with its other workers: :func:`open_stores`.

::

    async with mcptrio.open_stores("redis://127.0.0.1:6379/0") as stores:
        server = mcptrio.Server("demo", stores=stores)
        await server.serve_http("0.0.0.0", 8000)        # or serve_http(..., stores=stores)

A :class:`Stores` bundle holds what the workers of one server share: the SSE
``event_store`` (resumption on any worker), the ``task_store``, the ``subscription_bus`` of
listen streams, the ``request_state_key`` that seals MRTR ``requestState``, and the coredis
client as ``redis`` for anything else that needs Redis (a session directory). With no URL (or
``"memory:"``) the bundle is the in-memory defaults, for one process.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import trio

from .call_records import CallRecords, MemoryCallRecords
from .event_store import EventStore, InMemoryEventStore
from .request_state_key_ring import KeyRing
from .subscription_bus import LocalSubscriptionBus, SubscriptionBus
from .task_store import MemoryTaskStore, TaskStore

if TYPE_CHECKING:
    from .redis_calls import RedisClient

__all__ = ["Stores", "open_stores"]

# The variable mcptrio.server.request_state reads a key from (the server sits above the stores).
_KEY_VARIABLE = "MCPTRIO_REQUEST_STATE_KEY"


@dataclass(frozen=True, kw_only=True)
class Stores:
    """The stores of a server, as one value (see the module docstring)."""

    event_store: EventStore
    task_store: TaskStore
    subscription_bus: SubscriptionBus
    #: The key that seals ``requestState``; ``None`` lets each process draw its own; with
    #: Redis, a :class:`~.request_state_key_ring.KeyRing` that follows the key Redis holds.
    request_state_key: bytes | str | KeyRing | None
    #: The coredis client the stores use (``None`` for the in-memory bundle).
    redis: RedisClient | None
    #: The key prefix every Redis key of these stores starts with.
    prefix: str = "mcptrio:"
    #: The records of calls a client marked to run once (:mod:`mcptrio.server.call_once`);
    #: ``None``: every call runs every time it comes.
    call_records: CallRecords | None = None


@asynccontextmanager
async def open_stores(
    url: str | None = None,
    *,
    prefix: str = "mcptrio:",
    timeout: float = 2.0,
    request_state_key: bytes | str | None = None,
    max_events_per_session: int = 4096,
    event_ttl: float = 3600.0,
    max_tasks: int = 10_000,
    max_task_bytes: int = 64 << 20,
    call_retention: float = 600.0,
    call_lease: float = 10.0,
    max_call_answer_bytes: int = 1 << 20,
) -> AsyncIterator[Stores]:
    """The stores for ``url`` for the ``async with`` block.

    ``redis://``, ``rediss://`` or ``unix://`` URLs give the Redis stores (Valkey too), every
    key under ``prefix``, every call under ``timeout`` seconds
    (:class:`~.redis_calls.StoreUnavailable` past it); ``None`` or ``"memory:"`` give the
    in-memory ones (the Redis ones need coredis: the ``redis`` extra). ``max_events_per_session``
    and ``event_ttl`` (seconds since a session's last event) bound the event store, ``max_tasks``
    and ``max_task_bytes`` the task store. The call records (a call marked with a call key runs
    once) keep an answer up to ``max_call_answer_bytes`` for ``call_retention`` seconds; in
    Redis a worker's claim on a running call lapses ``call_lease`` seconds after it died. The
    ``requestState`` key is ``request_state_key`` if given, else ``MCPTRIO_REQUEST_STATE_KEY``
    if set, else (Redis) the key shared through Redis.
    Redis is pinged on the way in: a Redis that is not there fails here, not on the first
    request.
    """
    if request_state_key is None:
        request_state_key = os.environ.get(_KEY_VARIABLE)
    if url is None or url.startswith("memory:"):
        yield Stores(
            event_store=InMemoryEventStore(max_events_per_session=max_events_per_session),
            task_store=MemoryTaskStore(max_tasks=max_tasks, max_bytes=max_task_bytes),
            subscription_bus=LocalSubscriptionBus(),
            request_state_key=request_state_key,
            redis=None,
            prefix=prefix,
            call_records=MemoryCallRecords(
                retention=call_retention, max_answer_bytes=max_call_answer_bytes
            ),
        )
        return
    async with _open_redis_stores(
        url,
        prefix=prefix,
        timeout=timeout,
        request_state_key=request_state_key,
        max_events_per_session=max_events_per_session,
        event_ttl=event_ttl,
        max_tasks=max_tasks,
        max_task_bytes=max_task_bytes,
        calls=partial(
            _redis_call_records,
            retention=call_retention,
            lease=call_lease,
            max_answer_bytes=max_call_answer_bytes,
        ),
    ) as stores:
        yield stores


@asynccontextmanager
async def _open_redis_stores(
    url: str,
    *,
    prefix: str,
    timeout: float,
    request_state_key: bytes | str | None,
    max_events_per_session: int,
    event_ttl: float,
    max_tasks: int,
    max_task_bytes: int,
    calls: Callable[[RedisClient, str, float], CallRecords],
) -> AsyncIterator[Stores]:
    # Imported here: the in-memory bundle must not need coredis.
    from .redis_calls import open_redis, unwrapped
    from .redis_event_store import RedisEventStore
    from .redis_request_state_key import keep_request_state_key, shared_request_state_key
    from .redis_subscription_bus import open_redis_subscription_bus
    from .redis_task_store import open_redis_task_store

    try:
        async with (
            open_redis(url, timeout=timeout) as redis,
            open_redis_task_store(
                redis, prefix=prefix, max_tasks=max_tasks, max_bytes=max_task_bytes, timeout=timeout
            ) as task_store,
            open_redis_subscription_bus(redis, prefix=prefix, timeout=timeout) as bus,
            trio.open_nursery() as nursery,
        ):
            ring: KeyRing | None = None
            if request_state_key is None:
                # A ring that follows the key Redis holds (see redis_request_state_key).
                ring = KeyRing(
                    await shared_request_state_key(redis, prefix=prefix, timeout=timeout)
                )
                await nursery.start(
                    partial(keep_request_state_key, redis, ring, prefix=prefix, timeout=timeout)
                )
            yield Stores(
                event_store=RedisEventStore(
                    redis,
                    prefix=prefix,
                    max_events_per_session=max_events_per_session,
                    ttl=event_ttl,
                    timeout=timeout,
                ),
                task_store=task_store,
                subscription_bus=bus,
                request_state_key=ring if request_state_key is None else request_state_key,
                redis=redis,
                prefix=prefix,
                call_records=calls(redis, prefix, timeout),
            )
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        raise unwrapped(group) from None


def _redis_call_records(
    redis: RedisClient,
    prefix: str,
    timeout: float,
    *,
    retention: float,
    lease: float,
    max_answer_bytes: int,
) -> CallRecords:
    from .redis_call_records import RedisCallRecords

    return RedisCallRecords(
        redis,
        prefix=prefix,
        retention=retention,
        lease=lease,
        max_answer_bytes=max_answer_bytes,
        timeout=timeout,
    )
