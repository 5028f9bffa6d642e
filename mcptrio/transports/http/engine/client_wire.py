"""The bytes of the HTTP client's exchanges: request heads out, responses in.

:mod:`.client_pool` moves bytes and keeps connections; this module turns a request into bytes
and a response's bytes into a head, body pieces and an end, with either of two parsers behind
one small interface (:class:`ResponseReader`):

- **httptools** (llhttp, the C parser uvicorn and our own server use) when it is installed: the
  head, every body piece and the end of the message come out of one ``feed`` of whatever the
  socket gave, with no Python work per byte or per header line;
- **h11** otherwise (pure Python, always installed).

Why two: h11 builds event objects, runs a state machine and validates every header line on both
the request and the response, which made it a large part of what a client's call costs; with
httptools and a request head written from a cached header block that part almost disappears
(the figures are in ``docs/explanation/http-transport.md``, "The client side").

Both enforce the same bounds: a response head over :data:`MAX_HEAD_SIZE` bytes, bad framing
(``Content-Length`` with ``Transfer-Encoding``, a bad chunk) or anything after the end of the
message fails the exchange with :class:`HttpProtocolError`. A body with neither length nor
chunking runs until the server closes the connection, as RFC 9112 says; that connection is
never reused.

Request heads: header names must be HTTP tokens and values may not hold CR, LF or NUL (no
header injection through a session id or a server-chosen revision string); a bad one raises
``ValueError`` before anything is sent. The encoded header block of a request is cached by its
headers, so a transport that sends the same headers on every POST pays for their checks and
encoding once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

import h11

from ....protocol.errors import TransportError
from .parser_choice import ParserName, httptools_chosen

__all__ = [
    "IDEMPOTENT_METHODS",
    "MAX_HEAD_SIZE",
    "ConnectionParser",
    "HeaderBlocks",
    "Headers",
    "HttpConnectError",
    "HttpError",
    "HttpProtocolError",
    "HttpStatusError",
    "HttpTimeout",
    "OutcomeUnknown",
    "ParserName",
    "ResponseHead",
    "ResponseReader",
    "checked_head",
]

#: The methods a request may be sent again with once it was written (RFC 9110 section 9.2.2).
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
#: The largest response head accepted (status line and headers), as h11's default.
MAX_HEAD_SIZE = 16 * 1024
#: Header blocks kept encoded; the cache starts over when it is full.
_HEADER_CACHE_SIZE = 256

_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
_FORBIDDEN_IN_VALUE = re.compile(rb"[\x00\r\n]")


class HttpError(TransportError):
    """Base of every error the HTTP client raises."""


class HttpConnectError(HttpError):
    """The connection could not be established."""


class HttpTimeout(HttpError):
    """A connect or read deadline passed."""


class HttpProtocolError(HttpError):
    """The peer broke the HTTP protocol or closed the connection mid-exchange."""


class OutcomeUnknown(HttpProtocolError):
    """The request was written and the connection ended before its answer: the server may have
    received it and acted on it, so it is not sent again (RFC 9110 section 9.2.2)."""


class HttpStatusError(HttpError):
    """The server answered a request with an HTTP error status (and no JSON-RPC error).

    ``status`` is the status code, ``body`` the start of the response's body.
    """

    def __init__(self, message: str, *, status: int = 0, body: bytes = b"") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class ResponseHead:
    """A response's status line and headers (names lower-case)."""

    __slots__ = ("headers", "reason", "status")

    def __init__(self, status: int, reason: bytes, headers: list[tuple[bytes, bytes]]) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers


Headers = Sequence[tuple[str | bytes, str | bytes]]


def checked_head(status: int, reason: bytes, headers: list[tuple[bytes, bytes]]) -> ResponseHead:
    """The head of a response, once it is known to respect :data:`MAX_HEAD_SIZE` and to give
    at most one framing (``Content-Length`` with ``Transfer-Encoding`` is how responses are
    smuggled: RFC 9112 6.3 says to treat it as an error)."""
    size = len(reason) + 15
    framings = 0
    for name, value in headers:
        size += len(name) + len(value) + 4
        if name == b"content-length" or name == b"transfer-encoding":
            framings += 1
    if size > MAX_HEAD_SIZE:
        raise HttpProtocolError(f"The response head is over {MAX_HEAD_SIZE} bytes")
    if framings > 1:
        raise HttpProtocolError("The response has more than one Content-Length or framing")
    return ResponseHead(status, reason, headers)


def _as_bytes(value: str | bytes) -> bytes:
    return value.encode("latin-1") if isinstance(value, str) else value


class HeaderBlocks:
    """Encodes header lists into ``name: value\\r\\n`` blocks, checked once and cached."""

    __slots__ = ("_cache",)

    def __init__(self) -> None:
        self._cache: dict[tuple[tuple[str | bytes, str | bytes], ...], tuple[bytes, bool]] = {}

    def block(self, headers: Headers) -> tuple[bytes, bool]:
        """The encoded block of ``headers`` (``user-agent`` added unless given), and whether
        they include a ``host`` header."""
        key = tuple(headers)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        lines: list[bytes] = []
        names: set[bytes] = set()
        for name, value in key:
            raw_name = _as_bytes(name).lower()
            raw_value = _as_bytes(value).strip(b" \t")
            if not _TOKEN.fullmatch(raw_name):
                raise ValueError(f"Invalid HTTP header name {raw_name!r}")
            if _FORBIDDEN_IN_VALUE.search(raw_value):
                raise ValueError(f"Invalid value of HTTP header {raw_name!r}")
            names.add(raw_name)
            lines.append(b"%s: %s\r\n" % (raw_name, raw_value))
        if b"user-agent" not in names:
            lines.append(b"user-agent: mcptrio\r\n")
        cached = (b"".join(lines), b"host" in names)
        if len(self._cache) >= _HEADER_CACHE_SIZE:
            self._cache.clear()
        self._cache[key] = cached
        return cached


class ResponseReader(Protocol):
    """Parses one response on a connection; :func:`new_reader` makes one per request."""

    #: Set once the head has arrived (1xx heads are skipped).
    head: ResponseHead | None
    #: Body pieces parsed and not yet taken.
    body: list[bytes]
    #: Set once the whole message has arrived.
    complete: bool

    def request_bytes(self, method: str, target: bytes, head: bytes, body: bytes) -> bytes:
        """The bytes of the request whose response this reads (``head``: its header lines)."""
        ...

    def feed(self, data: bytes | bytearray) -> None:
        """Parse ``data`` from the socket; :class:`HttpProtocolError` if it breaks HTTP."""
        ...

    def feed_eof(self) -> None:
        """The server closed the connection: completes a body that runs until then, else
        raises :class:`HttpProtocolError`."""
        ...

    def reusable(self) -> bool:
        """Whether the connection may carry another request (the exchange ended cleanly and
        both sides keep it alive)."""
        ...


class _H11Reader:
    """A response parsed by h11 (when httptools is not installed)."""

    __slots__ = ("_eof", "_h11", "body", "complete", "head")

    def __init__(self, connection: h11.Connection) -> None:
        if connection.our_state is h11.DONE and connection.their_state is h11.DONE:
            connection.start_next_cycle()
        self._h11 = connection
        self.head: ResponseHead | None = None
        self.body: list[bytes] = []
        self.complete = False
        self._eof = False

    def request_bytes(self, method: str, target: bytes, head: bytes, body: bytes) -> bytes:
        headers = [
            (name, value)
            for name, _, value in (line.partition(b": ") for line in head.split(b"\r\n") if line)
        ]
        h = self._h11
        try:
            data = h.send(h11.Request(method=method, target=target, headers=headers)) or b""
            if body:
                data += h.send(h11.Data(data=body)) or b""
            data += h.send(h11.EndOfMessage()) or b""
        except h11.LocalProtocolError as exc:
            raise ValueError(f"Cannot send this request: {exc}") from None
        return data

    def feed(self, data: bytes | bytearray) -> None:
        self._h11.receive_data(bytes(data))
        self._pump()

    def feed_eof(self) -> None:
        self._eof = True
        self._h11.receive_data(b"")
        self._pump()
        if not self.complete:
            raise HttpProtocolError("The server closed the connection mid-response")

    def _pump(self) -> None:
        h = self._h11
        while not self.complete:
            try:
                event = h.next_event()
            except h11.RemoteProtocolError as exc:
                raise HttpProtocolError(f"Invalid HTTP from the server: {exc}") from None
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            if isinstance(event, h11.Response):
                self.head = checked_head(event.status_code, event.reason, list(event.headers))
            elif isinstance(event, h11.Data):
                if event.data:
                    self.body.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                self.complete = True
            elif isinstance(event, h11.ConnectionClosed):
                return
            elif not isinstance(event, h11.InformationalResponse):
                raise HttpProtocolError(f"Unexpected HTTP event {type(event).__name__}")

    def reusable(self) -> bool:
        h = self._h11
        done = h.our_state is h11.DONE and h.their_state is h11.DONE
        # Bytes after the response (we never pipeline) mean a server out of step.
        return self.complete and done and not self._eof and not h.trailing_data[0]


class ConnectionParser:
    """What a connection keeps between its responses: which parser, and for h11 its state
    machine."""

    __slots__ = ("_h11", "_make")

    def __init__(self, parser: ParserName = "auto") -> None:
        self._h11: h11.Connection | None = None
        self._make: Callable[[], ResponseReader] | None = None
        if httptools_chosen(parser):
            from .client_httptools import HttptoolsResponseReader

            # One llhttp parser per connection, as llhttp is meant to be used: each response
            # starts where the last one ended (see HttptoolsResponseReader.next_response).
            self._make = HttptoolsResponseReader().next_response
        else:
            self._h11 = h11.Connection(our_role=h11.CLIENT)

    @property
    def kind(self) -> str:
        """``"httptools"`` or ``"h11"``."""
        return "h11" if self._h11 is not None else "httptools"

    def reader(self) -> ResponseReader:
        """The reader of the next response on this connection."""
        if self._make is not None:
            return self._make()
        assert self._h11 is not None
        return _H11Reader(self._h11)
