"""The HTTP client's fast :class:`~.client_wire.ResponseReader`, on httptools (llhttp, in C).

One ``feed`` of whatever the socket gave yields the head, every body piece and the end of the
message through llhttp's callbacks, with no Python work per byte. llhttp has no limit on a
head's size, so the bytes fed while the head is incomplete are counted
(:data:`~.client_wire.MAX_HEAD_SIZE`). It refuses ``Content-Length`` together with
``Transfer-Encoding`` and bad chunk framing. An interim ``1xx`` head is skipped; ``101`` is an
error (the client never asks to switch protocols).
"""

from __future__ import annotations

import httptools

from .client_wire import MAX_HEAD_SIZE, HttpProtocolError, ResponseHead, checked_head

__all__ = ["HttptoolsResponseReader"]


class HttptoolsResponseReader:
    """One response, parsed by httptools."""

    __slots__ = (
        "_eof_ends",
        "_head_bytes",
        "_headers",
        "_keep_alive",
        "_parser",
        "_reason",
        "_surplus",
        "body",
        "complete",
        "head",
    )

    def __init__(self) -> None:
        self._parser = httptools.HttpResponseParser(self)
        self.next_response()

    def next_response(self) -> HttptoolsResponseReader:
        """This reader, ready for the connection's next response, its llhttp parser kept.

        The pool asks for it only on a new connection, or on one whose last response was
        complete and kept alive (:meth:`reusable`): llhttp then stands at the start of the next
        message, and only this object's record of the last response is reset.
        """
        self.head: ResponseHead | None = None
        self.body: list[bytes] = []
        self.complete = False
        self._headers: list[tuple[bytes, bytes]] = []
        self._reason = b""
        self._head_bytes = 0
        self._keep_alive = False
        self._eof_ends = False
        self._surplus = False
        return self

    def request_bytes(self, method: str, target: bytes, head: bytes, body: bytes) -> bytes:
        if method == "HEAD":
            # The response to HEAD has framing headers but no body: llhttp cannot be told.
            raise ValueError("HEAD requests are not supported by this client")
        return b"%s %s HTTP/1.1\r\n%s\r\n%s" % (method.encode("ascii"), target, head, body)

    # ------------------------------------------------------------ llhttp's callbacks

    def on_status(self, reason: bytes) -> None:
        self._reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        parser = self._parser
        status = parser.get_status_code()
        if 100 <= status < 200:
            if status == 101:
                raise HttpProtocolError("The server switched protocols unasked")
            # An interim response: its message ends here, the real one follows.
            self._headers, self._reason, self._head_bytes = [], b"", 0
            return
        headers = self._headers
        self.head = checked_head(status, self._reason, headers)
        self._keep_alive = parser.should_keep_alive()
        if status not in (204, 304):
            # Neither length nor chunking: the body runs until the server closes.
            self._eof_ends = not any(
                name in (b"content-length", b"transfer-encoding") for name, _ in headers
            )

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_begin(self) -> None:
        if self.head is not None:
            # Bytes after the end of the response: we never pipeline, so the server broke
            # HTTP/1.1.
            self._surplus = True

    def on_message_complete(self) -> None:
        if self.head is not None:
            self.complete = True

    # ------------------------------------------------------------ ResponseReader

    def feed(self, data: bytes | bytearray) -> None:
        if self.head is None:
            self._head_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade) as exc:
            if isinstance(exc.__context__, HttpProtocolError):
                raise exc.__context__ from None
            raise HttpProtocolError(f"Invalid HTTP from the server: {exc}") from None
        if self._surplus:
            raise HttpProtocolError("The server sent bytes after the end of its response")
        if self.head is None and self._head_bytes > MAX_HEAD_SIZE:
            raise HttpProtocolError(f"The response head is over {MAX_HEAD_SIZE} bytes")

    def feed_eof(self) -> None:
        if self._eof_ends and self.head is not None and not self.complete:
            self.complete = True
            self._keep_alive = False
            return
        raise HttpProtocolError("The server closed the connection mid-response")

    def reusable(self) -> bool:
        return self.complete and self._keep_alive and not self._eof_ends
