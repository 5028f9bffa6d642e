"""The pure-Python :class:`~mcptrio.transports.http.engine.parser.RequestParser`, on h11.

h11 also tracks the server's side of the connection, but the built-in server writes responses
itself (:func:`~mcptrio.transports.http.engine.parser.response_head`), so h11 is used for reading
only: each request gets a fresh ``h11.Connection`` (cheap: under a microsecond) seeded with the
bytes the previous one had received but not parsed, which is exactly h11's ``trailing_data``.
For the same reason one that has read a whole request and holds no byte beyond it can be let go
of while the response streams (:meth:`H11RequestParser.shrink`): the next bytes go to a fresh
one, which hands them on at :meth:`~H11RequestParser.next_request` as the old one would have.
"""

from __future__ import annotations

import h11

from .parser import (
    END_OF_MESSAGE,
    PEER_CLOSED,
    HttpParseError,
    ParserEvent,
    build_request_head,
)

__all__ = ["H11RequestParser"]


class H11RequestParser:
    """Parses requests with h11; heads over ``max_head_size`` bytes are refused with 431."""

    __slots__ = ("_connection", "_max_head_size")

    def __init__(self, max_head_size: int) -> None:
        self._max_head_size = max_head_size
        # None between two requests while the connection's response streams (see shrink).
        self._connection: h11.Connection | None = self._fresh()

    def _fresh(self) -> h11.Connection:
        return h11.Connection(h11.SERVER, max_incomplete_event_size=self._max_head_size)

    def feed(self, data: bytes | bytearray) -> None:
        connection = self._connection
        if connection is None:
            connection = self._connection = self._fresh()
        connection.receive_data(bytes(data))

    def next_event(self) -> ParserEvent | None:
        connection = self._connection
        if connection is None:
            return None  # nothing fed since it let go
        try:
            event = connection.next_event()
        except h11.RemoteProtocolError as error:
            raise HttpParseError(str(error), error.error_status_hint) from None
        kind = type(event)
        if kind is h11.Data:
            return bytes(event.data)  # type: ignore[union-attr]
        if kind is h11.Request:
            assert isinstance(event, h11.Request)
            return build_request_head(
                event.method,
                event.target,
                list(event.headers),
                event.http_version,
                self._max_head_size,
            )
        if kind is h11.EndOfMessage:
            return END_OF_MESSAGE
        if kind is h11.ConnectionClosed:
            return PEER_CLOSED
        # NEED_DATA, or PAUSED once this request is complete (its response is not h11's).
        return None

    def next_request(self) -> None:
        previous = self._connection
        if previous is None:
            return  # the next feed makes a fresh one
        data, closed = previous.trailing_data
        connection = self._connection = self._fresh()
        if data:
            connection.receive_data(bytes(data))
        if closed:
            connection.receive_data(b"")

    def unparsed(self) -> bytes:
        connection = self._connection
        return b"" if connection is None else bytes(connection.trailing_data[0])

    def shrink(self) -> None:
        # A whole request read and nothing beyond it: what a fresh connection would hold.
        connection = self._connection
        if connection is not None and connection.their_state is h11.DONE:
            data, closed = connection.trailing_data
            if not data and not closed:
                self._connection = None
