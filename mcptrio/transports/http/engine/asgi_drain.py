"""Stopping an ASGI-served app without losing a request: :class:`AsgiDrain`.

Hypercorn's own graceful shutdown (its ``shutdown_trigger``) stops accepting and waits for the
requests its connections carry, but it knows nothing of the streams that wait on the server for
as long as they are open (a Streamable HTTP GET stream, a long poll): it would wait for them
until its timeout, or cut the answers being made along with them. So the app drains first, and
Hypercorn is told to stop only once nothing is in flight:

1. :meth:`AsgiDrain.drain` starts draining: each HTTP request that comes after it is answered
   503 with ``Connection: close`` and ``Retry-After`` (the client tries again, elsewhere or once
   the server is back), a WebSocket upgrade too, each open stream that may be cut
   (:meth:`~.exchange.HttpResponder.allow_eviction`) ends now, as on the built-in front end,
   and each WebSocket is told to end once it has answered what it carries
   (``WebSocketPeer.stopping``);
2. it returns once every request that was in flight has been answered;
3. then Hypercorn's shutdown closes the connections, all idle by then.

The wait is the caller's to bound (a call may take long), as for the built-in front end.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import trio

__all__ = ["AsgiDrain"]


class AsgiDrain:
    """The requests an ASGI app is answering, and whether it is draining (module docstring)."""

    __slots__ = ("_evictable", "_idle", "draining", "in_flight", "stopping")

    def __init__(self) -> None:
        self.in_flight = 0
        self.draining = False
        #: Set by :meth:`drain`: what each WebSocket waits on to end (it is in flight until
        #: it has answered what it carries and closed).
        self.stopping = trio.Event()
        self._idle = trio.Event()
        self._evictable: set[trio.CancelScope] = set()

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Count one request as in flight while the block answers it."""
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1
            if self.draining and not self.in_flight:
                self._idle.set()

    def evictable(self, scope: trio.CancelScope) -> None:
        """The handler running under ``scope`` holds a stream that may be cut: cut it now if
        draining, else when draining starts (until :meth:`answered`)."""
        if self.draining:
            scope.cancel()
        else:
            self._evictable.add(scope)

    def answered(self, scope: trio.CancelScope) -> None:
        self._evictable.discard(scope)

    async def drain(self) -> None:
        """Refuse new requests, cut the streams that may be cut, and return once every request
        in flight has been answered."""
        self.draining = True
        self.stopping.set()
        for scope in self._evictable:
            scope.cancel()
        self._evictable.clear()
        if self.in_flight:
            await self._idle.wait()
