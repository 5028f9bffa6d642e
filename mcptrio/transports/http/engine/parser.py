"""The small sans-IO request parser interface the built-in HTTP/1.1 server is written against.

The built-in server (:mod:`builtin_server`) exists once; what differs between h11 and httptools
lives behind :class:`RequestParser`: bytes go in with :meth:`RequestParser.feed`, events come out
of :meth:`RequestParser.next_event`. The events are deliberately plain so that the server's hot
loop does no allocation the wire does not need:

- a :class:`RequestHead` (method, target, headers, version, and what the server must act on:
  keep-alive, upgrade, ``Expect: 100-continue``, ``Content-Length``);
- ``bytes``: a piece of the request body (already de-chunked);
- :data:`END_OF_MESSAGE`: the request body is complete;
- :data:`PEER_CLOSED`: the client closed the connection between requests;
- ``None``: more bytes are needed.

A head the parser cannot accept raises :class:`HttpParseError` carrying the status to answer
with (400, or 431 when the head is over the size limit). Events of pipelined requests that were
complete before the bad bytes are still delivered first.

Responses are not the parsers' business: :func:`response_head` serialises a response head for
both, with header lists joined once and the ``Date`` value cached per second.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from typing import Final, Protocol

__all__ = [
    "CHUNK_END",
    "END_OF_MESSAGE",
    "NEED_MORE",
    "PEER_CLOSED",
    "EndOfMessage",
    "HttpParseError",
    "NeedMore",
    "ParserEvent",
    "PeerClosed",
    "RequestHead",
    "RequestParser",
    "build_request_head",
    "chunk_head",
    "response_head",
]


class EndOfMessage:
    """The type of :data:`END_OF_MESSAGE`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "END_OF_MESSAGE"


class PeerClosed:
    """The type of :data:`PEER_CLOSED`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "PEER_CLOSED"


class NeedMore:
    """The type of :data:`NEED_MORE`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NEED_MORE"


END_OF_MESSAGE: Final = EndOfMessage()
PEER_CLOSED: Final = PeerClosed()
#: Not a parser event: what the server's connection says when the next piece of a request body
#: has not been read yet (``BuiltinConnection.body_event_now``).
NEED_MORE: Final = NeedMore()


class HttpParseError(Exception):
    """The client sent something that is not acceptable HTTP/1.1; answer ``status`` and close.

    A signal inside the built-in server, never raised to a caller.
    """

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(slots=True)
class RequestHead:
    """A parsed request line and header block."""

    method: bytes
    target: bytes
    #: Names lower-case, values as received.
    headers: list[tuple[bytes, bytes]]
    #: ``b"1.1"`` or ``b"1.0"``.
    http_version: bytes
    #: Whether the client allows another request on this connection afterwards.
    keep_alive: bool
    #: The lower-cased ``Upgrade`` value when the client asked to switch protocols.
    upgrade: bytes | None
    expect_continue: bool
    #: ``None`` for a chunked body (or none at all).
    content_length: int | None
    #: Whether the body comes in ``Transfer-Encoding: chunked``.
    chunked: bool = False

    @property
    def is_websocket_upgrade(self) -> bool:
        return self.method == b"GET" and self.upgrade is not None and b"websocket" in self.upgrade


ParserEvent = RequestHead | bytes | EndOfMessage | PeerClosed


class RequestParser(Protocol):
    """Bytes in, request events out; one instance per connection."""

    def feed(self, data: bytes | bytearray) -> None:
        """Take bytes from the client; ``b""`` means the client closed its side."""
        ...

    def next_event(self) -> ParserEvent | None:
        """The next event, or ``None`` when more bytes are needed (:class:`HttpParseError`)."""
        ...

    def next_request(self) -> None:
        """Get ready for the next request once this one's response has been sent."""
        ...

    def unparsed(self) -> bytes:
        """After an upgrade request's :data:`END_OF_MESSAGE`: the bytes that followed it."""
        ...

    def shrink(self) -> None:
        """Let go of what the parser would make again, if it is between two requests and holds
        nothing (no event, no byte of the next request, no error); else do nothing. The next
        :meth:`feed` makes it again. The connection asks while a response streams: it may wait
        hours for its client's next bytes."""
        ...


_HOST, _CONTENT_LENGTH, _CONNECTION, _UPGRADE, _EXPECT, _ORIGIN, _TRANSFER_ENCODING = range(7)
# The headers that decide a request's framing and what the server does with the connection.
_FRAMING_HEADERS: dict[bytes, int] = {
    b"host": _HOST,
    b"content-length": _CONTENT_LENGTH,
    b"connection": _CONNECTION,
    b"upgrade": _UPGRADE,
    b"expect": _EXPECT,
    b"origin": _ORIGIN,
    b"transfer-encoding": _TRANSFER_ENCODING,
}


def build_request_head(
    method: bytes,
    target: bytes,
    headers: list[tuple[bytes, bytes]],
    http_version: bytes,
    max_size: int,
) -> RequestHead:
    """Read what the server acts on out of ``headers`` (names already lower-case), in one pass.

    HTTP/1.0 connections are not kept alive (as in h11). A request that asks to switch protocols
    (``Connection: upgrade``) or uses ``CONNECT`` closes the connection after its response unless
    it is handed over to WebSocket, because what follows it is not HTTP/1.1.

    A head of more than ``max_size`` bytes (counted without the line ends) is refused with 431,
    even when it arrived whole in one read.

    The framing is checked as RFC 9112 asks of a server, the same for every parser, so that no
    two readers of the request (a proxy in front, this server) can disagree on where it ends or
    whom it is for; each of these gets 400 and the connection is closed after it (so bytes that
    follow, a "smuggled" request, are never read as a request):

    - ``Content-Length`` together with ``Transfer-Encoding`` (section 6.1: a request smuggling
      attempt, which the server may not try to make sense of);
    - several ``Content-Length`` values that differ, or one that is not a decimal number;
    - ``Transfer-Encoding`` on HTTP/1.0, or more than one of it; a coding other than ``chunked``
      alone gets 501 (section 6.1: not understood);
    - no ``Host`` on HTTP/1.1, or more than one (section 3.2);
    - more than one ``Origin`` (RFC 6454 allows one; which of two the Origin check should
      believe is exactly the ambiguity an attacker wants).
    """
    size = len(method) + len(target) + 10
    keep_alive = http_version == b"1.1"
    upgrade: bytes | None = None
    connection_upgrade = False
    expect_continue = False
    content_length: int | None = None
    chunked = False
    transfer_encodings = hosts = origins = 0
    kind_of = _FRAMING_HEADERS.get
    for name, value in headers:
        size += len(name) + len(value) + 2
        # Most headers (Accept, Content-Type, Mcp-Session-Id...) are none of the framing ones:
        # one dict lookup passes them, not seven comparisons.
        kind = kind_of(name)
        if kind is None:
            continue
        if kind == _HOST:
            hosts += 1
        elif kind == _CONTENT_LENGTH:
            if not value.isdigit() or (content_length is not None and int(value) != content_length):
                raise HttpParseError("invalid Content-Length")
            content_length = int(value)
        elif kind == _CONNECTION:
            tokens = value.lower()
            if b"close" in tokens:
                keep_alive = False
            if b"upgrade" in tokens:
                connection_upgrade = True
        elif kind == _UPGRADE:
            upgrade = value.lower()
        elif kind == _EXPECT:
            expect_continue = value.lower() == b"100-continue"
        elif kind == _ORIGIN:
            origins += 1
        else:
            transfer_encodings += 1
            chunked = value.strip().lower() == b"chunked"
            if not chunked:
                raise HttpParseError("unsupported Transfer-Encoding (only chunked)", 501)
    if size > max_size:
        raise HttpParseError("request head too large", 431)
    if transfer_encodings:
        if content_length is not None:
            raise HttpParseError("Content-Length together with Transfer-Encoding")
        if transfer_encodings > 1 or http_version != b"1.1":
            raise HttpParseError("invalid Transfer-Encoding")
    if hosts > 1 or (hosts == 0 and http_version == b"1.1"):
        raise HttpParseError("a request needs exactly one Host header")
    if origins > 1:
        raise HttpParseError("more than one Origin header")
    if method == b"CONNECT" or (connection_upgrade and upgrade is not None):
        keep_alive = False
    if not connection_upgrade:
        upgrade = None
    return RequestHead(
        method,
        target,
        headers,
        http_version,
        keep_alive,
        upgrade,
        expect_continue,
        content_length,
        chunked,
    )


_STATUS_LINES: dict[int, bytes] = {
    status.value: b"HTTP/1.1 %d %s\r\n" % (status.value, status.phrase.encode("ascii"))
    for status in HTTPStatus
}
_date_second = 0
_date_line = b""


def _date_header_line() -> bytes:
    global _date_second, _date_line
    now = int(time.time())
    if now != _date_second:
        _date_second = now
        _date_line = b"date: " + formatdate(now, usegmt=True).encode("ascii") + b"\r\n"
    return _date_line


# Header blocks of recent responses, by their (tuple) headers: an endpoint answers with the same
# few header sets over and over, so each is joined and checked once.
_HEADER_BLOCKS: dict[tuple[tuple[bytes, bytes], ...], bytes] = {}
_HEADER_BLOCKS_MAX = 256


def _header_block(headers: Sequence[tuple[bytes, bytes]]) -> bytes:
    """``headers`` as header lines; ``ValueError`` if a name or value holds CR or LF."""
    key = headers if isinstance(headers, tuple) else None
    if key is not None:
        block = _HEADER_BLOCKS.get(key)
        if block is not None:
            return block
    parts: list[bytes] = []
    for name, value in headers:
        parts += (name, b": ", value, b"\r\n")
    block = b"".join(parts)
    # One scan of the joined lines, not one per header (response splitting).
    if block.count(b"\n") != len(headers) or block.count(b"\r") != len(headers):
        raise ValueError("response header names and values must not contain CR or LF")
    if key is not None:
        if len(_HEADER_BLOCKS) >= _HEADER_BLOCKS_MAX:
            _HEADER_BLOCKS.clear()
        _HEADER_BLOCKS[key] = block
    return block


def response_head(
    status: int,
    headers: Sequence[tuple[bytes, bytes]],
    *,
    content_length: int | None,
    keep_alive: bool,
) -> bytes:
    """Serialise a response head; ``content_length=None`` means a chunked body.

    Header names and values are refused (``ValueError``) if they hold CR or LF.
    """
    status_line = _STATUS_LINES.get(status) or b"HTTP/1.1 %d Unknown\r\n" % status
    if content_length is None:
        length = b"transfer-encoding: chunked\r\n"
    else:
        length = b"content-length: %d\r\n" % content_length
    return b"".join(
        (
            status_line,
            _date_header_line(),
            _header_block(headers),
            length,
            b"\r\n" if keep_alive else b"connection: close\r\n\r\n",
        )
    )


def chunk_head(size: int) -> bytes:
    """What goes before ``size`` bytes of data (``size`` > 0) to make them one chunk of a chunked
    body; :data:`CHUNK_END` goes after them."""
    return b"%x\r\n" % size


#: What ends a chunk of a chunked body, after its data.
CHUNK_END: Final = b"\r\n"
