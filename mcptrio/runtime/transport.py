"""The one small interface a session drives, and every transport implements.

A transport moves whole frames (one encoded JSON-RPC message, or a 2025-03-26 batch) between
the session and its peer. It knows nothing of JSON-RPC: framing, size limits and the byte
stream or HTTP exchange underneath are its only concerns. The interface lives here, with the
session that uses it; ``mcptrio.transports`` holds the implementations.

- :meth:`Transport.receive` returns the next frame. A frame larger than the transport's limit is
  not buffered whole: the transport skips its bytes and returns :class:`OversizedFrame` so the
  session can answer with an error and carry on. A frame already read and buffered may be
  returned without a checkpoint (so one read's requests start together); a receive that waits
  is a checkpoint and loses nothing when cancelled. At the clean end of input it raises
  ``trio.EndOfChannel``; a broken connection raises ``trio.BrokenResourceError``.
- A transport that could not carry a request it sent (an HTTP client whose POST failed or was
  refused) returns :class:`FailedRequest` for it: the session fails that request with the
  error it holds (a :class:`~mcptrio.protocol.errors.TransportError`, say), so the caller
  sees what went wrong on this side rather than an error answer the peer never sent.
- :meth:`Transport.send` writes one or more frames, in order. Each is tagged with the id of the
  request it relates to (or ``None``), which HTTP transports use to pick the stream it goes on.
  Writing to a closed or broken peer raises ``trio.BrokenResourceError`` or
  ``trio.ClosedResourceError``.
- :meth:`Transport.aclose` releases the transport. It is idempotent.

The session calls ``receive`` from one task and ``send`` from one other task, never
concurrently with themselves, so a transport needs no locking of its own.

One capability is optional, and declared as its own protocol: a transport that can take a frame
without waiting implements :class:`SupportsSendNowait`. The session checks for it once, when it
is made, and then hands frames straight to it, skipping the hop through its writer task, as long
as nothing is queued ahead of them (the in-memory and HTTP transports have it; stdio and
WebSocket write to a stream, which may block, and do not).

An in-process transport may also carry a result unencoded
(:class:`SupportsCarriedResults`, :class:`~mcptrio.protocol.codec.CarriedResult`): its
``receive`` then returns those as well, and the session converts them instead of decoding.

A transport whose frames each arrive in a task of their own (a Streamable HTTP POST) does not
queue them for ``receive``: the task hands its frame to :meth:`Session.handle_frame
<mcptrio.runtime.session.Session.handle_frame>` itself, and such a transport's ``receive`` only
waits for its end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

from ..protocol.base import RequestId
from ..protocol.codec import CarriedResult
from ..protocol.errors import McpError
from ..protocol.unreadable import LEADING_LOOK_BYTES

if TYPE_CHECKING:
    from .session import Session

__all__ = [
    "DEFAULT_MAX_FRAME_SIZE",
    "FailedRequest",
    "Frame",
    "Outgoing",
    "OversizedFrame",
    "SessionFactory",
    "SupportsCarriedResults",
    "SupportsSendNowait",
    "Transport",
    "oversized_frame",
]

#: The default limit on one incoming frame: 4 MiB.
DEFAULT_MAX_FRAME_SIZE = 4 * 1024 * 1024


class OversizedFrame(NamedTuple):
    """Stands in for a frame that was over the size limit and was dropped unread.

    ``head`` is how the frame began (see :func:`oversized_frame`): its first members say whose
    it was, so that the call it answered fails at once, or the request it was is refused with
    its id, instead of waiting for an answer that will never come
    (:meth:`Connection.oversized <mcptrio.protocol.connection.Connection.oversized>`).
    """

    limit: int
    head: bytes = b""
    #: How the frame ended (its last bytes; ``b""`` when the transport does not know): some
    #: encoders write the ``id`` last.
    tail: bytes = b""


def oversized_frame(
    limit: int, data: bytes | bytearray, tail: bytes | bytearray | None = None
) -> OversizedFrame:
    """The :class:`OversizedFrame` for a frame over ``limit`` that begins with ``data`` (at
    least ``limit + 1`` bytes of it, or all of it if shorter) and ends with ``tail`` (``None``:
    ``data`` is the whole frame). Its head is its first
    :data:`~mcptrio.protocol.unreadable.LEADING_LOOK_BYTES` bytes, or its first ``limit + 1``
    under a smaller limit, and its tail its last ``LEADING_LOOK_BYTES``: so both are the same
    however the frame arrived in pieces."""
    head = bytes(data[: min(LEADING_LOOK_BYTES, limit + 1)])
    last = (data if tail is None else tail)[-LEADING_LOOK_BYTES:]
    return OversizedFrame(limit, head, bytes(last))


class FailedRequest(NamedTuple):
    """Stands in for the answer to request ``request_id``, which the transport could not carry:
    the session fails the request with ``error``."""

    request_id: RequestId
    error: McpError


Frame = bytes | OversizedFrame


class Outgoing(NamedTuple):
    """One encoded frame to send, and the request it relates to, if any."""

    data: bytes
    related: RequestId | None = None


class Transport(Protocol):
    """Moves frames between a session and its peer."""

    async def receive(self) -> Frame | FailedRequest | CarriedResult:
        """The next incoming frame; ``trio.EndOfChannel`` at the end of input."""
        ...

    async def send(self, frames: Sequence[Outgoing]) -> None:
        """Write ``frames`` in order."""
        ...

    async def aclose(self) -> None:
        """Close the transport; safe to call more than once."""
        ...


@runtime_checkable
class SupportsSendNowait(Transport, Protocol):
    """A transport that can also take one frame without waiting."""

    def send_nowait(self, frame: Outgoing) -> bool:
        """Hand ``frame`` over without blocking or checkpointing; ``False`` when it cannot
        (no room, or closed), in which case the session sends it through :meth:`send`."""
        ...


@runtime_checkable
class SupportsExchange(Transport, Protocol):
    """A transport that can carry one request and its answer in the requesting task."""

    async def exchange(self, frame: Outgoing) -> bool:
        """Send the request ``frame`` and deliver what answers it, in the calling task (an HTTP
        client's POST and its response); ``False``, without sending or checkpointing, when it
        cannot at the moment, and the session then sends it through its outbox.

        Cancelling the caller stops the exchange as the transport's own way of calling off a
        request would; the session still tells the peer as for any cancelled request.
        """
        ...


@runtime_checkable
class SupportsCarriedResults(SupportsSendNowait, Protocol):
    """An in-process transport that can hand a result to its peer's session unencoded."""

    #: Whether it does (an in-memory pair can be made to carry only frames).
    carries_results: bool

    def send_carried_nowait(self, answer: CarriedResult) -> bool:
        """Hand ``answer`` over without blocking or checkpointing; ``False`` when it cannot
        (no room, or closed), in which case the session encodes it and sends the frame."""
        ...


class SessionFactory(Protocol):
    """Makes the session of each connection a server accepts: a :class:`mcptrio.Server` is one.

    The servers that open sessions themselves (the WebSocket servers, each HTTP endpoint) take
    one, so that they know nothing of the server behind it.
    """

    def session(self, transport: Transport) -> Session: ...
