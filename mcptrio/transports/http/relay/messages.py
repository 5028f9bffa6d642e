"""What workers send each other when one forwards an HTTP exchange to another.

A forwarded exchange is the HTTP request as it arrived (:class:`Request`), then its response in
the pieces the endpoint wrote it in (:class:`Head`, :class:`Chunk`, :class:`End`,
:class:`Evictable`), and :class:`Gone` when the client that sent it leaves early; or, from an
owner that is stopping, :class:`Declined` instead of any response. Each message
names its exchange, so that one mailbox per worker carries every exchange. MessagePack, through
msgspec: bodies and chunks are bytes, carried as they are.
"""

from __future__ import annotations

import msgspec

__all__ = [
    "Chunk",
    "Declined",
    "End",
    "Evictable",
    "Gone",
    "Head",
    "RelayMessage",
    "Request",
    "decode",
    "encode",
]


class Request(msgspec.Struct, tag="req", array_like=True, frozen=True):
    """An HTTP request, forwarded to the session's owner; answers go to ``reply_to``."""

    exchange: str
    reply_to: str
    method: str
    path: str
    query_string: bytes
    scheme: str
    headers: list[tuple[bytes, bytes]]
    body: bytes
    client: tuple[str, int] | None


class Head(msgspec.Struct, tag="head", array_like=True, frozen=True):
    """The response's status and headers; with its whole body unless ``streamed``."""

    exchange: str
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    streamed: bool


class Chunk(msgspec.Struct, tag="chunk", array_like=True, frozen=True):
    """A piece of a streamed body."""

    exchange: str
    data: bytes


class End(msgspec.Struct, tag="end", array_like=True, frozen=True):
    """The streamed body is complete (``ok``), or the owner's handler failed part-way."""

    exchange: str
    ok: bool


class Evictable(msgspec.Struct, tag="evict", array_like=True, frozen=True):
    """The owner allows the open stream to be cut when its connection slot is needed."""

    exchange: str


class Gone(msgspec.Struct, tag="gone", array_like=True, frozen=True):
    """The client left (or cannot keep up): the owner stops the exchange."""

    exchange: str


class Declined(msgspec.Struct, tag="declined", array_like=True, frozen=True):
    """The owner is stopping and did not serve the request (nothing of it ran): the forwarder
    routes it again once the owner has left."""

    exchange: str


RelayMessage = Request | Head | Chunk | End | Evictable | Gone | Declined

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(RelayMessage)


def encode(message: RelayMessage) -> bytes:
    return _encoder.encode(message)


def decode(data: bytes) -> RelayMessage:
    """A message; ``msgspec.DecodeError`` (a ``ValueError``) when ``data`` is not one."""
    message: RelayMessage = _decoder.decode(data)
    return message
