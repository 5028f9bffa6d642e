"""What every HTTP client transport runs on: a connection pool and a nursery for its tasks.

Each ``open_*_client_transport`` either borrows the caller's :class:`HttpClientPool` or makes
one it owns, and runs its POSTs and streams in a nursery of its own, hosted in a task of an
unwrapping nursery (see :mod:`mcptrio.runtime.nurseries` for why it is not the caller's).
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from ....runtime.nurseries import open_unwrapping_nursery, run_task_nursery
from ..engine.client_pool import HttpClientPool
from .base import HttpClientOptions

__all__ = ["open_client_resources"]


@asynccontextmanager
async def open_client_resources(
    pool: HttpClientPool | None,
    options: HttpClientOptions,
    *,
    ssl_context: ssl.SSLContext | None,
    streams: int,
) -> AsyncIterator[tuple[HttpClientPool, trio.Nursery]]:
    """Yield ``(pool, tasks)``: the pool to send through and the nursery for the tasks.

    Without a ``pool``, one is made with ``ssl_context``, the options' ``timeout`` (for
    connecting and for every read) and room for ``max_concurrent_posts`` POSTs plus ``streams``
    long-lived streams, and closed on exit, shielded so that a cancelled
    block still releases its connections. Closing the transport must cancel ``tasks``
    (``tasks.cancel_scope.cancel()``), or the block does not end. A single error raised in the
    block leaves it as itself, not in an exception group.
    """
    own_pool = pool is None
    http = pool or HttpClientPool(
        ssl_context=ssl_context,
        connect_timeout=options.timeout,
        read_timeout=options.timeout,
        max_connections=options.max_concurrent_posts + streams,
    )
    try:
        async with open_unwrapping_nursery() as nursery:
            tasks: trio.Nursery = await nursery.start(run_task_nursery)
            yield http, tasks
    finally:
        if own_pool:
            with trio.CancelScope(shield=True):
                await http.aclose()
