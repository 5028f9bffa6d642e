"""The one small interface every transport implements.

A transport moves whole frames (one encoded JSON-RPC message, or a 2025-03-26 batch) between
the session and its peer. It knows nothing of JSON-RPC: framing, size limits and the byte
stream or HTTP exchange underneath are its only concerns.

- :meth:`Transport.receive` returns the next frame. A frame larger than the transport's limit is
  not buffered whole: the transport skips its bytes and returns :class:`OversizedFrame` so the
  session can answer with an error and carry on. A frame already read and buffered may be
  returned without a checkpoint (so one read's requests start together); a receive that waits
  is a checkpoint and loses nothing when cancelled. At the clean end of input it raises
  ``trio.EndOfChannel``; a broken connection raises ``trio.BrokenResourceError``.
- :meth:`Transport.send` writes one or more frames, in order. Each is tagged with the id of the
  request it relates to (or ``None``), which HTTP transports use to pick the stream it goes on.
  Writing to a closed or broken peer raises ``trio.BrokenResourceError`` or
  ``trio.ClosedResourceError``.
- :meth:`Transport.aclose` releases the transport. It is idempotent.

The session calls ``receive`` from one task and ``send`` from one other task, never
concurrently with themselves, so a transport needs no locking of its own.

A transport may also offer ``send_nowait(frame: Outgoing) -> bool``: hand one frame over
without blocking or checkpointing, returning ``False`` when it cannot. The session uses it, when
nothing else is queued, to skip the hop through its writer task (the in-memory transport has it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ..protocol.base import RequestId

if TYPE_CHECKING:
    from ..runtime.session import Session

__all__ = [
    "DEFAULT_MAX_FRAME_SIZE",
    "Frame",
    "Outgoing",
    "OversizedFrame",
    "SessionFactory",
    "Transport",
]

#: The default limit on one incoming frame: 4 MiB.
DEFAULT_MAX_FRAME_SIZE = 4 * 1024 * 1024


class OversizedFrame(NamedTuple):
    """Stands in for a frame that was over the size limit and was dropped unread."""

    limit: int


Frame = bytes | OversizedFrame


class Outgoing(NamedTuple):
    """One encoded frame to send, and the request it relates to, if any."""

    data: bytes
    related: RequestId | None = None


class Transport(Protocol):
    """Moves frames between a session and its peer."""

    async def receive(self) -> Frame:
        """The next incoming frame; ``trio.EndOfChannel`` at the end of input."""
        ...

    async def send(self, frames: Sequence[Outgoing]) -> None:
        """Write ``frames`` in order."""
        ...

    async def aclose(self) -> None:
        """Close the transport; safe to call more than once."""
        ...


class SessionFactory(Protocol):
    """Makes the session of each connection a server accepts: a :class:`mcptrio.Server` is one.

    The servers that open sessions themselves (the WebSocket servers, each HTTP endpoint) take
    one, so that they know nothing of the server behind it.
    """

    def session(self, transport: Transport) -> Session: ...
