"""The HTTP client pools of the auth components, and who closes them.

Everything auth sends (a key set fetch, an introspection, discovery, a token request, a client
metadata document) goes through mcptrio's trio HTTP client,
:class:`~mcptrio.transports.http.engine.client_pool.HttpClientPool`, in one of two ways:

- a long-lived component (a token verifier, the development server's client registry) keeps a
  :class:`PoolOnFirstUse`: the pool it was given, or one it makes the first time it sends and
  closes in its own ``aclose`` (never a pool it was given);
- a flow that sends a few requests and is done (a login) opens a pool for its block with
  :func:`open_http_pool`.

Either way ``timeout`` bounds connecting and every read.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import trio

from ..transports.http.engine.client_connect import Address
from ..transports.http.engine.client_pool import HttpClientPool, Origin

__all__ = ["PoolOnFirstUse", "open_http_pool"]


class PoolOnFirstUse:
    """The pool ``given``, or one made on the first :meth:`get` with ``ssl_context`` and
    ``timeout``; :meth:`aclose` closes only a pool it made."""

    def __init__(
        self, given: HttpClientPool | None, *, ssl_context: ssl.SSLContext | None, timeout: float
    ) -> None:
        self._pool = given
        self._own = given is None
        self._ssl_context = ssl_context
        self._timeout = timeout

    def get(self) -> HttpClientPool:
        if self._pool is None:
            self._pool = HttpClientPool(
                ssl_context=self._ssl_context,
                connect_timeout=self._timeout,
                read_timeout=self._timeout,
            )
        return self._pool

    async def aclose(self) -> None:
        if self._own and self._pool is not None:
            await self._pool.aclose()


@asynccontextmanager
async def open_http_pool(
    *,
    ssl_context: ssl.SSLContext | None,
    timeout: float,
    max_connections: int,
    address_filter: Callable[[Origin, list[Address]], list[Address]] | None = None,
) -> AsyncIterator[HttpClientPool]:
    """A pool for the block, closed on the way out, shielded so that a cancelled block still
    releases its connections; ``address_filter`` as :class:`HttpClientPool`'s."""
    http = HttpClientPool(
        ssl_context=ssl_context,
        connect_timeout=timeout,
        read_timeout=timeout,
        max_connections=max_connections,
        address_filter=address_filter,
    )
    try:
        yield http
    finally:
        with trio.CancelScope(shield=True):
            await http.aclose()
