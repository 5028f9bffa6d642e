"""The reference the suite runs first: :data:`IN_MEMORY`, the in-memory transport as
``mcptrio.open_client(server)`` uses it (results handed over unencoded), and a model of the
two functions a transport's record needs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Unpack

import trio

from ...client import Client, ClientOptions, open_client
from ...protocol.revisions import Era
from ...runtime.transport import DEFAULT_MAX_FRAME_SIZE
from ...server import Server
from ...transports.memory import MemoryTransport, memory_transport_pair
from .subject import TransportUnderTest

__all__ = ["IN_MEMORY", "MemoryListener", "connect_in_memory", "serve_in_memory"]


class MemoryListener:
    """What :func:`serve_in_memory` yields: each :meth:`accept` is a new in-memory connection
    to ``server``, whose session runs in the serving nursery (and ends with it)."""

    def __init__(self, server: Server, nursery: trio.Nursery, max_frame_size: int) -> None:
        self.server = server
        self._nursery = nursery
        self._max_frame_size = max_frame_size

    async def accept(self) -> MemoryTransport:
        """A new connection: the server's end is served, the client's end is returned."""
        client_end, server_end = memory_transport_pair(
            max_frame_size=self._max_frame_size, carry_results=True
        )
        await self._nursery.start(self.server.serve_session, server_end)
        return client_end


@asynccontextmanager
async def serve_in_memory(
    server: Server, era: Era, *, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
) -> AsyncIterator[MemoryListener]:
    """Serve ``server`` in memory for the block: yields the :class:`MemoryListener`."""
    async with trio.open_nursery() as nursery:
        yield MemoryListener(server, nursery, max_frame_size)
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def connect_in_memory(
    listener: MemoryListener, **options: Unpack[ClientOptions]
) -> AsyncIterator[Client]:
    """A client of the server behind ``listener``, over a new in-memory connection."""
    async with open_client(await listener.accept(), **options) as client:
        yield client


#: The in-memory transport, the reference every other transport is compared to.
IN_MEMORY = TransportUnderTest(
    name="in-memory",
    serve=serve_in_memory,
    connect=connect_in_memory,
    autojump_clock=True,
    lacks={
        "half_close_ends_the_session": (
            "an in-memory pair has no half-close: aclose() ends both directions at once"
        ),
        "oversized_answer_fails_its_call": (
            "a result is handed over in process unencoded, and no size limit applies to it"
            " (mcptrio/transports/memory.py)"
        ),
    },
)
