"""A small HTTP/1.1 client on h11 over trio streams, with keep-alive pooling per origin.

It is the one HTTP client the MCP client transports use. It does exactly what they need:

- one request at a time per connection, with the body given whole and the response body
  streamed (``Content-Length`` and chunked alike, h11 handles both);
- keep-alive: a connection whose response was read to the end goes back to an idle list for
  its origin (scheme, host, port) and is reused by the next request there;
- at most ``max_connections`` connections per origin, idle or busy; a request waits for a free
  one (within its connect deadline);
- TLS through ``trio.SSLStream`` with an ``ssl.SSLContext`` (``ssl.create_default_context()``
  unless given);
- deadlines: ``connect_timeout`` covers waiting for a slot, TCP connect and the TLS handshake;
  ``read_timeout`` applies to writing the request and waiting for the response's first bytes
  together, then to every single read, so a long but lively response (an SSE stream) never
  times out, a silent one does;
- an early answer: a large body is written while the response is read, so a server that
  refuses it (413) and closes is heard, not seen as a broken connection (RFC 9112 9.5).

Theory of reuse: a server may close an idle keep-alive connection at any moment. One idle for
``max_idle_time`` (shorter than common servers' keep-alive timeout; docs/explanation/
calls-run-once.md) is not reused, so no request crosses such a close. Before reusing another,
the pool checks whether its socket has become readable (a closed one does): it is dropped
before a byte of the request is written. Once written, nothing proves the server did not get the
request (a write that succeeded only filled the kernel's buffer; a server that closed as it got
them, or died running them, looks the same), so when the connection ends after the write and
before the response, only an idempotent request (RFC 9110 9.2.2) on a *reused* connection
goes once more on a fresh one; any other (``POST``) fails with :class:`OutcomeUnknown`.

Parsing: httptools when installed, h11 otherwise (``parser=``, see :mod:`.client_wire`); the
request head is written from a cached, checked header block. Plain TCP goes through
:mod:`.client_socket` (no checkpoint after a write that the read of its answer follows).

Errors: :class:`HttpError` and its branch of the tree in :mod:`mcptrio.protocol.errors`.

Cancellation: cancelling a request closes its connection (it is never reused half-read).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
from collections import deque
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import lru_cache, partial
from types import TracebackType
from urllib.parse import urlsplit

import trio

from .client_connect import Address, connect_failure, open_tcp_to_chosen
from .client_socket import ConnectionStream
from .client_wire import (
    IDEMPOTENT_METHODS,
    ConnectionParser,
    HeaderBlocks,
    Headers,
    HttpConnectError,
    HttpError,
    HttpProtocolError,
    HttpStatusError,
    HttpTimeout,
    OutcomeUnknown,
    ParserName,
    ResponseReader,
)

__all__ = [
    "HttpClientPool",
    "HttpConnectError",
    "HttpError",
    "HttpProtocolError",
    "HttpResponse",
    "HttpStatusError",
    "HttpTimeout",
    "Origin",
    "OutcomeUnknown",
    "split_url",
]


log = logging.getLogger("mcptrio.transports.http.client")

_READ_SIZE = 65536

#: A request up to this size is written before the response is read: the socket buffers of
#: both ends take it whole, so its write never waits on the server. A larger one is written
#: while the response is read (:func:`_write_watching_for_an_answer`).
_WRITTEN_UNWATCHED = 1 << 16
#: Seconds an idle connection stays reusable (see the module's theory of reuse).
DEFAULT_MAX_IDLE_TIME = 3.0


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a connection goes: ``("https", "example.com", 443)``."""

    scheme: str
    host: str
    port: int

    @property
    def host_header(self) -> bytes:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return (host if self.port == default else f"{host}:{self.port}").encode("ascii")


@lru_cache(maxsize=256)
def split_url(url: str) -> tuple[Origin, bytes]:
    """The origin and the request target (path and query) of an ``http(s)://`` URL."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ValueError(f"Not an http(s) URL: {url!r}")
    if not parts.hostname:
        raise ValueError(f"The URL has no host: {url!r}")
    port = parts.port or (443 if scheme == "https" else 80)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return Origin(scheme, parts.hostname, port), target.encode("ascii")


class _Connection:
    """One keep-alive connection: a trio stream and its parser's state."""

    __slots__ = ("closed", "origin", "parser", "reader", "request_cut", "socket", "stream")

    def __init__(self, stream: trio.abc.Stream, origin: Origin, parser: ParserName) -> None:
        self.stream = stream
        self.origin = origin
        self.parser = ConnectionParser(parser)
        #: The reader of the response in progress (or the last one).
        self.reader: ResponseReader | None = None
        #: Whether the last request's write was stopped by an early answer (then the
        #: connection cannot carry another).
        self.request_cut = False
        self.closed = False
        raw = stream.transport_stream if isinstance(stream, trio.SSLStream) else stream
        self.socket = raw if isinstance(raw, ConnectionStream) else getattr(raw, "socket", None)

    def looks_reusable(self) -> bool:
        """Whether an idle connection still seems open (a closed one polls readable)."""
        return not self.closed and (self.socket is None or not self.socket.is_readable())

    def parser_done(self) -> bool:
        """Whether the last exchange ended so that the connection may carry another."""
        return not self.request_cut and self.reader is not None and self.reader.reusable()

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            await trio.aclose_forcefully(self.stream)


class HttpResponse:
    """A response whose head has arrived; the body is read with :meth:`receive_some`.

    Only valid inside the ``async with pool.request(...)`` block that produced it.
    """

    __slots__ = ("_connection", "_reader", "headers", "read_timeout", "reason", "status")

    def __init__(
        self, connection: _Connection, reader: ResponseReader, read_timeout: float
    ) -> None:
        head = reader.head
        assert head is not None
        self._connection = connection
        self._reader = reader
        self.status: int = head.status
        self.reason: str = head.reason.decode("latin-1")
        #: The headers, names lower-case, in the order received.
        self.headers: list[tuple[bytes, bytes]] = head.headers
        self.read_timeout = read_timeout

    @property
    def complete(self) -> bool:
        """Whether the whole body has arrived and been taken."""
        return self._reader.complete and not self._reader.body

    def header(self, name: bytes) -> bytes | None:
        """The first value of header ``name`` (lower-case), or ``None``."""
        return next((value for key, value in self.headers if key == name), None)

    @property
    def content_type(self) -> str:
        """The media type, lower-case, without parameters (``""`` when absent)."""
        value = (self.header(b"content-type") or b"").split(b";", 1)[0]
        return value.strip().lower().decode("latin-1")

    async def receive_some(self) -> bytes:
        """The next piece of the body; ``b""`` once it is complete.

        What the last read brought is returned without waiting. Raises :class:`HttpTimeout`
        when nothing arrives for ``read_timeout`` seconds and :class:`HttpProtocolError` when
        the connection breaks first.
        """
        reader = self._reader
        while True:
            body = reader.body
            if body:
                data = body[0] if len(body) == 1 else b"".join(body)
                body.clear()
                return data
            if reader.complete:
                await trio.lowlevel.checkpoint()
                return b""
            await _read_into(self._connection.stream, reader, self.read_timeout)

    async def read(self, limit: int) -> bytes | None:
        """The whole body, or ``None`` if it is longer than ``limit`` bytes (then unread). No read
        once its end came: the wait for the head (every response has had one) was the checkpoint."""
        parts: list[bytes] = []
        size = 0
        while not self.complete and (chunk := await self.receive_some()):
            size += len(chunk)
            if size > limit:
                return None
            parts.append(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def drain_buffered(self) -> None:
        """Drop what of the body has already arrived, without waiting (a response whose end
        came with it then leaves its connection reusable)."""
        self._reader.body.clear()


async def _read_into(stream: trio.abc.Stream, reader: ResponseReader, timeout: float) -> None:
    """One read from ``stream`` into ``reader``, within ``timeout`` seconds."""
    with trio.move_on_after(timeout) as scope:
        try:
            data = await stream.receive_some(_READ_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise HttpProtocolError(f"The connection broke: {exc}") from None
    if scope.cancelled_caught:
        raise HttpTimeout(f"No data from the server for {timeout} s")
    if data:
        reader.feed(data)
    else:
        reader.feed_eof()


class _OriginPool:
    __slots__ = ("host_line", "idle", "slots")

    def __init__(self, origin: Origin, max_connections: int) -> None:
        self.slots = trio.Semaphore(max_connections)
        #: Idle connections, each with the time it went idle, the oldest first.
        self.idle: deque[tuple[float, _Connection]] = deque()
        self.host_line = b"host: %s\r\n" % origin.host_header


class HttpClientPool:
    """Keep-alive HTTP/1.1 connections, pooled per origin.

    ``request`` is the only operation; ``aclose`` closes every idle connection (busy ones close
    when their request finishes). The pool itself holds no task. At most ``max_connections``
    connections per origin, of which at most ``max_idle`` (all by default) are kept open between
    requests: concurrent callers each get a connection of their own, and keep it.
    ``parser`` picks the response parser (``"auto"``: httptools when installed, else h11).
    ``address_filter(origin, addresses)`` chooses the addresses a connection to ``origin`` may
    use, or raises to refuse them (see :mod:`.client_connect`); ``None``: any. A connection
    idle for ``max_idle_time`` seconds is closed rather than reused (see the module).
    """

    def __init__(
        self,
        *,
        max_connections: int = 64,
        max_idle: int | None = None,
        ssl_context: ssl.SSLContext | None = None,
        connect_timeout: float = 30.0,
        read_timeout: float = 30.0,
        parser: ParserName = "auto",
        address_filter: Callable[[Origin, list[Address]], list[Address]] | None = None,
        max_idle_time: float = DEFAULT_MAX_IDLE_TIME,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.max_connections = max_connections
        self.max_idle = max_connections if max_idle is None else max_idle
        self._ssl_context = ssl_context
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        ConnectionParser(parser)  # fails now, not at the first request, on a bad name
        self.parser: ParserName = parser
        self.address_filter = address_filter
        self.max_idle_time = max_idle_time
        self._origins: dict[Origin, _OriginPool] = {}
        self._blocks = HeaderBlocks()
        self._closed = False

    @property
    def ssl_context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        return self._ssl_context

    def idle_connections(self, origin: Origin) -> int:
        """How many idle connections to ``origin`` the pool holds."""
        pool = self._origins.get(origin)
        return len(pool.idle) if pool is not None else 0

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Headers = (),
        body: bytes = b"",
        read_timeout: float | None = None,
    ) -> AbstractAsyncContextManager[HttpResponse]:
        """``async with pool.request(...) as response``: send one request and get the response
        once its head has arrived.

        Leaving the block releases the connection: back to the pool if the body was read to the
        end and the server keeps it alive, closed otherwise. ``read_timeout`` overrides the
        pool's per-read deadline for this response. A header name that is not an HTTP token,
        or a value holding CR, LF or NUL, raises ``ValueError`` before anything is sent.
        """
        return _Exchange(self, method, url, headers, body, read_timeout)

    async def _exchange(
        self,
        pool: _OriginPool,
        origin: Origin,
        method: str,
        target: bytes,
        head: bytes,
        body: bytes,
        timeout: float,
    ) -> tuple[_Connection, HttpResponse]:
        fresh_since = trio.current_time() - self.max_idle_time if pool.idle else 0.0
        while pool.idle:
            idle_since, conn = pool.idle.pop()
            if idle_since < fresh_since or not conn.looks_reusable():
                await conn.aclose()
                continue
            try:
                response = await _send(conn, method, target, head, body, timeout, reused=True)
            except BaseException:
                await conn.aclose()
                raise
            if response is not None:
                return conn, response
            await conn.aclose()
            if method not in IDEMPOTENT_METHODS:
                raise _outcome_unknown(method, origin)
            log.debug("reused connection ended before the %s response; sending it again", method)
            break
        conn = await self._connect(origin)
        try:
            response = await _send(conn, method, target, head, body, timeout, reused=False)
        except BaseException:
            await conn.aclose()
            raise
        assert response is not None
        return conn, response

    async def _connect(self, origin: Origin) -> _Connection:
        context = self.ssl_context if origin.scheme == "https" else None
        stream: trio.abc.Stream | None = None
        with trio.move_on_after(self.connect_timeout) as scope:
            try:
                choose = self.address_filter
                stream = await open_tcp_to_chosen(
                    origin.host, origin.port, None if choose is None else partial(choose, origin)
                )
                if context is not None:
                    tls = trio.SSLStream(
                        stream, context, server_hostname=origin.host, https_compatible=True
                    )
                    stream = tls
                    await tls.do_handshake()
            except (OSError, trio.BrokenResourceError) as exc:
                if stream is not None:
                    await trio.aclose_forcefully(stream)
                raise HttpConnectError(
                    f"Cannot connect to {origin.scheme}://{origin.host}:{origin.port}:"
                    f" {connect_failure(exc)}"
                ) from exc
            except BaseException:
                if stream is not None:
                    await trio.aclose_forcefully(stream)
                raise
        if scope.cancelled_caught or stream is None:
            if stream is not None:
                await trio.aclose_forcefully(stream)
            raise HttpTimeout(
                f"Connecting to {origin.host}:{origin.port} took over {self.connect_timeout} s"
            )
        if isinstance(stream, trio.SocketStream):
            # Requests are written whole: Nagle's algorithm would only delay them.
            stream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
            stream = ConnectionStream.take(stream)
        return _Connection(stream, origin, self.parser)

    async def aclose(self) -> None:
        """Close every idle connection; further requests raise ``trio.ClosedResourceError``."""
        self._closed = True
        for pool in self._origins.values():
            while pool.idle:
                await pool.idle.pop()[1].aclose()
        await trio.lowlevel.checkpoint()


@dataclass(slots=True, eq=False)
class _Exchange:
    """One request of :meth:`HttpClientPool.request`, as an async context manager (a class,
    not ``@asynccontextmanager``, whose generator costs more per request)."""

    _pool: HttpClientPool
    _method: str
    _url: str
    _headers: Headers
    _body: bytes
    _read_timeout: float | None
    _via: _OriginPool | None = None
    _conn: _Connection | None = None

    async def __aenter__(self) -> HttpResponse:
        client = self._pool
        if client._closed:
            raise trio.ClosedResourceError("The HTTP client pool is closed")
        method, body = self._method, self._body
        origin, target = split_url(self._url)
        pool = client._origins.get(origin)
        if pool is None:
            pool = client._origins[origin] = _OriginPool(origin, client.max_connections)
        timeout = client.read_timeout if self._read_timeout is None else self._read_timeout
        block, has_host = client._blocks.block(self._headers)
        head = block if has_host else pool.host_line + block
        if body or method in ("POST", "PUT", "PATCH"):
            head += b"content-length: %d\r\n" % len(body)
        try:
            pool.slots.acquire_nowait()
        except trio.WouldBlock:
            with trio.move_on_after(client.connect_timeout) as slot_wait:
                await pool.slots.acquire()
            if slot_wait.cancelled_caught:
                raise HttpTimeout(f"No free connection to {origin.host}:{origin.port}") from None
        try:
            conn, response = await client._exchange(
                pool, origin, method, target, head, body, timeout
            )
        except BaseException:
            pool.slots.release()
            raise
        self._via, self._conn = pool, conn
        return response

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        pool, conn = self._via, self._conn
        assert pool is not None and conn is not None
        try:
            if (
                exc_type is None
                and not self._pool._closed
                and conn.parser_done()
                and len(pool.idle) < self._pool.max_idle
            ):
                pool.idle.append((trio.current_time(), conn))
            else:
                await conn.aclose()
        finally:
            pool.slots.release()


async def _send(
    conn: _Connection,
    method: str,
    target: bytes,
    head: bytes,
    body: bytes,
    timeout: float,
    *,
    reused: bool,
) -> HttpResponse | None:
    """Write the request and wait for the response's head, ``timeout`` seconds per write and
    per read. ``None`` when the connection was ``reused`` and ended before a byte of the
    response came (whether it may go again: see the module's theory of reuse)."""
    reader = conn.reader = conn.parser.reader()
    data = reader.request_bytes(method, target, head, body)
    with trio.move_on_after(timeout) as scope:
        if len(data) <= _WRITTEN_UNWATCHED:
            await _write_request(conn.stream, data)
            answered = await _read_head(conn.stream, reader, scope, timeout)
        else:
            answered = await _write_watching_for_an_answer(conn, data, reader, scope, timeout)
    if scope.cancelled_caught:
        raise HttpTimeout(f"The server did not answer within {timeout} s")
    if not answered:
        if reused:
            return None
        raise _outcome_unknown(method, conn.origin)
    return HttpResponse(conn, reader, timeout)


def _outcome_unknown(method: str, origin: Origin) -> OutcomeUnknown:
    where = f"{origin.host}:{origin.port}"
    return OutcomeUnknown(f"The connection to {where} ended after the {method} was sent")


async def _write_request(stream: trio.abc.Stream, data: bytes) -> None:
    """Write the request. A write the server breaks off is not an error of its own: the server
    may have answered before it closed (a 413 for a body it refused), and the read that
    follows finds that answer, or finds the connection ended."""
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        await stream.send_all(data)


async def _write_watching_for_an_answer(
    conn: _Connection,
    data: bytes,
    reader: ResponseReader,
    scope: trio.CancelScope,
    timeout: float,
) -> bool:
    """Write a large request while reading the response's head, as RFC 9112 section 9.5 asks of
    a client sending a body; returns as :func:`_read_head`.

    A server refusing the body answers before reading it, then drains a little of it and
    closes. Reading while writing takes that answer as it comes; the write is then stopped
    (for an answer that refuses the body: :func:`_refuses_the_body`) and the connection is
    not reused (its request was cut short). Over TLS the write is left
    to end by itself, because a ``trio.SSLStream`` whose write is cancelled cannot be read
    either, and the answer's body would be lost.
    """
    stream = conn.stream
    written = trio.Event()

    async def write() -> None:
        await _write_request(stream, data)
        written.set()

    failure: HttpError | None = None
    answered = False
    async with trio.open_nursery() as nursery:
        nursery.start_soon(write)
        try:
            answered = await _read_head(stream, reader, scope, timeout)
        except HttpError as exc:
            # Raised below, outside the nursery, as itself rather than in an exception group.
            failure = exc
            nursery.cancel_scope.cancel()
        if not written.is_set() and (not answered or _refuses_the_body(reader)):
            conn.request_cut = True
            if not isinstance(stream, trio.SSLStream):
                nursery.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return answered


def _refuses_the_body(reader: ResponseReader) -> bool:
    """Whether a response that came before the whole body was written refuses the rest (RFC
    9112 9.5): an error status, or the server closing the connection. Any other early answer
    (a stream the server starts while it reads) waits for the write to end."""
    head = reader.head
    assert head is not None
    if head.status >= 400:
        return True
    return any(name == b"connection" and b"close" in value.lower() for name, value in head.headers)


async def _read_head(
    stream: trio.abc.Stream, reader: ResponseReader, scope: trio.CancelScope, timeout: float
) -> bool:
    """Read until the response's head is parsed, moving ``scope``'s deadline ``timeout``
    seconds past each read that brought bytes. ``False`` when the connection ended or broke
    before a single byte of the response came."""
    got_bytes = False
    while reader.head is None:
        try:
            chunk = await stream.receive_some(_READ_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            if not got_bytes:
                return False
            raise HttpProtocolError(f"The connection broke: {exc}") from None
        if not chunk:
            if not got_bytes:
                return False
            reader.feed_eof()
        else:
            got_bytes = True
            scope.deadline = trio.current_time() + timeout
            reader.feed(chunk)
    return True
