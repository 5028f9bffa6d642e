"""The fast :class:`~.parser.RequestParser`, on httptools (llhttp, in C).

httptools is callback-driven and parses everything it is fed, so several pipelined requests in
one read turn into a queue of events here; the server takes them one at a time. It has no limit
on the size of a head, so the bytes fed while a head is incomplete are counted (431 past
``max_head_size``). An error raised by llhttp is held back until the events parsed before it
have been taken, so earlier pipelined requests are still answered.

After a request that switches protocols (``Connection: upgrade``), llhttp stops and reports
where the other protocol's bytes start: those are :meth:`HttptoolsRequestParser.unparsed`, and
the parser cannot read HTTP on that connection again (the server closes it after a response
that is not a WebSocket handover; see ``build_request_head``).

Between two requests llhttp is in the state it starts in: once a request's end has been taken,
with no byte of the next one fed, a fresh llhttp parser reads what follows exactly as the old one
would. So :meth:`HttptoolsRequestParser.shrink` lets go of it (with the callbacks it binds)
while a response streams, and the next :meth:`~HttptoolsRequestParser.feed` makes another.
"""

from __future__ import annotations

import httptools

from .parser import (
    END_OF_MESSAGE,
    PEER_CLOSED,
    HttpParseError,
    ParserEvent,
    RequestHead,
    build_request_head,
)

__all__ = ["HttptoolsRequestParser"]


class HttptoolsRequestParser:
    """Parses requests with httptools; heads over ``max_head_size`` bytes are refused with 431."""

    __slots__ = (
        "_awaiting_head",
        "_body_left",
        "_error",
        "_events",
        "_head_bytes",
        "_headers",
        "_in_message",
        "_max_head_size",
        "_parser",
        "_unparsed",
        "_url",
    )

    def __init__(self, max_head_size: int) -> None:
        self._max_head_size = max_head_size
        # None between two requests while the connection's response streams (see shrink).
        self._parser: httptools.HttpRequestParser | None = httptools.HttpRequestParser(self)
        # A list: it holds a few events at a time, and an empty deque is much larger than an
        # empty list (an open SSE stream keeps its connection, and this, for its whole life).
        self._events: list[ParserEvent] = []
        self._error: HttpParseError | None = None
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._awaiting_head = True
        self._in_message = False
        self._head_bytes = 0
        self._unparsed = b""
        self._body_left = 0

    # httptools callbacks

    def on_message_begin(self) -> None:
        self._in_message = True
        self._url = b""
        self._headers = []

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        self._awaiting_head = False
        if self._error is not None:
            return
        parser = self._parser
        assert parser is not None  # a callback of its own feed_data
        try:
            head = build_request_head(
                parser.get_method(),
                self._url,
                self._headers,
                parser.get_http_version().encode("ascii"),
                self._max_head_size,
            )
        except HttpParseError as error:
            self._error = error
            return
        self._events.append(head)

    def on_body(self, body: bytes) -> None:
        if self._error is None:
            self._events.append(body)

    def on_message_complete(self) -> None:
        if self._error is None:
            self._events.append(END_OF_MESSAGE)
        self._in_message = False
        self._awaiting_head = True
        self._head_bytes = 0

    # RequestParser

    def feed(self, data: bytes | bytearray) -> None:
        if self._body_left:
            if data:
                self._raw_body(data)
            else:
                self._error = HttpParseError("the client closed the connection mid-request")
            return
        if self._error is not None or self._unparsed:
            return
        if not data:
            if self._in_message:
                self._error = HttpParseError("the client closed the connection mid-request")
            else:
                self._events.append(PEER_CLOSED)
            return
        if self._awaiting_head:
            self._head_bytes += len(data)
        parser = self._parser
        if parser is None:
            parser = self._parser = httptools.HttpRequestParser(self)
        try:
            parser.feed_data(data)
        except httptools.HttpParserUpgrade as upgrade:
            offset = upgrade.args[0] if upgrade.args else len(data)
            self._upgraded(bytes(data[offset:]))
        except httptools.HttpParserError as error:
            if self._error is None:
                self._error = HttpParseError(f"malformed request: {error}")
        if self._awaiting_head and self._head_bytes > self._max_head_size and self._error is None:
            self._error = HttpParseError("request head too large", 431)

    def _upgraded(self, rest: bytes) -> None:
        """llhttp stopped after an upgrade request's head (and reported its message complete).

        A WebSocket handshake has no body, and ``rest`` belongs to WebSocket. Any other upgrade
        (``h2c``) is not honoured, so its ``Content-Length`` body is still read as HTTP, here,
        since llhttp will not; a chunked one is refused.
        """
        self._awaiting_head = False
        head = next((e for e in reversed(self._events) if type(e) is RequestHead), None)
        if head is None or head.is_websocket_upgrade or not (head.content_length or head.chunked):
            self._unparsed = rest
            return
        if self._events and self._events[-1] is END_OF_MESSAGE:
            self._events.pop()
        if head.chunked:
            self._error = HttpParseError("a chunked body on a protocol upgrade request")
            return
        self._body_left = head.content_length or 0
        self._raw_body(rest)

    def _raw_body(self, data: bytes | bytearray) -> None:
        piece = bytes(data[: self._body_left])
        if piece:
            self._events.append(piece)
            self._body_left -= len(piece)
        if not self._body_left:
            self._events.append(END_OF_MESSAGE)
            # Not HTTP/1.1 any more: what follows is dropped (the server closes after this).
            self._unparsed = b"upgraded"

    def next_event(self) -> ParserEvent | None:
        if self._events:
            return self._events.pop(0)
        if self._error is not None:
            raise self._error
        return None

    def next_request(self) -> None:
        # httptools moves on to the next request by itself.
        return None

    def unparsed(self) -> bytes:
        return self._unparsed

    def shrink(self) -> None:
        # Nothing held: not inside a message (no byte of the next one fed), no event or error
        # waiting to be taken, not switched to another protocol (see the module docstring).
        if not (
            self._in_message
            or self._events
            or self._error is not None
            or self._unparsed
            or self._body_left
        ):
            self._parser = None
