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
- :meth:`Transport.send` writes one or more frames, in order. Each says what it is
  (:class:`FrameKind`: an answer, a request or a notification) and which of the peer's requests
  it answers or relates to, which HTTP transports use to pick the stream it goes on: a
  transport never reads a frame's bytes to route it.
  Writing to a closed or broken peer raises ``trio.BrokenResourceError`` or
  ``trio.ClosedResourceError``.
- :meth:`Transport.aclose` releases the transport. It is idempotent.

The session calls ``receive`` from one task and ``send`` from one other task, never
concurrently with themselves, so a transport needs no locking of its own.

What a transport can do beyond that it declares in one record, :class:`TransportAbilities`,
returned by :meth:`Transport.abilities` and read once, when the session is made:

- ``send_nowait``: it takes a frame without waiting; the session then hands frames straight to
  it, skipping the hop through its writer task, as long as nothing is queued ahead of them (the
  in-memory and HTTP transports have it; stdio and WebSocket write to a stream, which may
  block, and do not).
- ``exchange``: it carries a request and delivers its answer in the requesting task (an HTTP
  client's POST).
- ``send_carried_nowait``: in process, it carries a result unencoded
  (:class:`~mcptrio.protocol.codec.CarriedResult`); its ``receive`` then returns those as well,
  and the session converts them instead of decoding.
- ``request_ended_unanswered``: it wants to know when one of the peer's requests ends with no
  answer (the peer cancelled it), because it keeps something open until the answer (an HTTP
  response stream).
- ``deliver_to``: it delivers some frames itself, from the task that read them (an HTTP client
  reading a POST's response), rather than returning them from ``receive``: the session gives it
  its :meth:`~mcptrio.runtime.session.Session.deliver` when it starts.

A transport whose frames each arrive in a task of their own (a Streamable HTTP POST) does not
queue them for ``receive``: the task hands its frame to :meth:`Session.deliver
<mcptrio.runtime.session.Session.deliver>` itself, the same way in the session's reader takes,
and such a transport's ``receive`` only waits for its end. One whose every frame arrives so, and
that ends only when the session is closed, says so (``hands_in_every_frame``): the session's
reader then does not call ``receive`` at all.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Sequence
from typing import NamedTuple, Protocol

from ..protocol.base import RequestId
from ..protocol.codec import CarriedResult, Envelope
from ..protocol.errors import McpError
from ..protocol.unreadable import LEADING_LOOK_BYTES

__all__ = [
    "DEFAULT_MAX_FRAME_SIZE",
    "Delivered",
    "FailedRequest",
    "Frame",
    "FrameKind",
    "Outgoing",
    "OversizedFrame",
    "Transport",
    "TransportAbilities",
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


class FrameKind(enum.Enum):
    """What an outgoing frame is, as the session that made it says."""

    #: The answer (a result or an error) to the peer's request ``related``; for a 2025-03-26
    #: batch, the answers to all its members, sent together once every one has ended.
    ANSWER = "answer"
    #: A request of this side's; ``related`` is the peer's request it is made for, if any.
    REQUEST = "request"
    #: A notification; ``related`` is the peer's request it is about, if any.
    NOTIFICATION = "notification"


class Outgoing(NamedTuple):
    """One encoded frame to send: what it is, and the peer's request it answers or relates to.

    ``kind`` is ``None`` only for bytes no session made (a test writing a raw frame): a
    transport that routes frames has nothing to route such a frame by.
    """

    data: bytes
    related: RequestId | None = None
    kind: FrameKind | None = None


#: What a transport hands the session (:meth:`Session.deliver
#: <mcptrio.runtime.session.Session.deliver>`): a frame, or what stands in for one.
Delivered = bytes | Envelope | CarriedResult | OversizedFrame | FailedRequest


class TransportAbilities(NamedTuple):
    """What a transport can do beyond :class:`Transport`'s three methods; each ``None`` when it
    cannot. Declared once (:meth:`Transport.abilities`) and read once, by the session."""

    #: Hand one frame over without blocking or checkpointing; ``False`` when it cannot (no
    #: room, or closed), and the session then sends it through :meth:`Transport.send`.
    send_nowait: Callable[[Outgoing], bool] | None = None
    #: Send a request frame and deliver what answers it, in the calling task (an HTTP client's
    #: POST and its response); ``False``, without sending or checkpointing, when it cannot at
    #: the moment, and the session then sends it through its outbox. Cancelling the caller
    #: stops the exchange as the transport's own way of calling off a request would; the
    #: session still tells the peer, as for any cancelled request.
    exchange: Callable[[Outgoing], Awaitable[bool]] | None = None
    #: Hand a result to the peer's session unencoded without blocking or checkpointing;
    #: ``False`` when it cannot, and the session then encodes it and sends the frame.
    send_carried_nowait: Callable[[CarriedResult], bool] | None = None
    #: Told the id of each of the peer's requests that ends with no answer (the peer
    #: cancelled it, or the session ended), in the task where it ended.
    request_ended_unanswered: Callable[[RequestId], None] | None = None
    #: Given the session's ``deliver`` when the session starts, for the frames this transport
    #: delivers itself from the task that read them; each of the others still comes from
    #: ``receive``. A frame so delivered must not overtake one still to be received.
    deliver_to: Callable[[Callable[[Delivered], Awaitable[None]]], None] | None = None
    #: Every incoming frame is handed to the session's ``deliver`` by the task that read it
    #: (a Streamable HTTP POST), and the transport ends only when the session is closed: the
    #: session's reader then never calls ``receive`` and only waits to be cancelled.
    hands_in_every_frame: bool = False


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

    def abilities(self) -> TransportAbilities:
        """What this transport can do beyond the three methods above (``TransportAbilities()``
        for nothing more)."""
        ...
