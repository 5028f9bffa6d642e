"""The pure-Python :class:`~mcptrio.transports.http.engine.parser.RequestParser`, on h11.

h11 also tracks the server's side of the connection, but the built-in server writes responses
itself (:func:`~mcptrio.transports.http.engine.parser.response_head`), so h11 is used for reading
only: each request gets a fresh ``h11.Connection`` (cheap: under a microsecond) seeded with the
bytes the previous one had received but not parsed, which is exactly h11's ``trailing_data``.
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
        self._connection = h11.Connection(h11.SERVER, max_incomplete_event_size=max_head_size)

    def feed(self, data: bytes | bytearray) -> None:
        self._connection.receive_data(bytes(data))

    def next_event(self) -> ParserEvent | None:
        try:
            event = self._connection.next_event()
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
        data, closed = self._connection.trailing_data
        self._connection = h11.Connection(h11.SERVER, max_incomplete_event_size=self._max_head_size)
        if data:
            self._connection.receive_data(bytes(data))
        if closed:
            self._connection.receive_data(b"")

    def unparsed(self) -> bytes:
        return bytes(self._connection.trailing_data[0])
