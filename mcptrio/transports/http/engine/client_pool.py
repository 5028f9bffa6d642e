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
  ``read_timeout`` applies to every single read of the response (and every write of the
  request), so a long but lively response (an SSE stream) never times out, a silent one does.

Theory of reuse: a server may close an idle keep-alive connection at any moment. Before reusing
one, the pool checks whether its socket has become readable (a closed or misbehaving
connection does); and if a request on a *reused* connection fails before a single byte of the
response arrived (the server closed it just as we picked it up), it is retried once on a fresh
connection. A server only closes an idle connection, one with no request in progress, so the
retried request was not acted on; that is the trade-off every keep-alive client makes.

Errors (a branch of the tree in :mod:`mcptrio.protocol.errors`)::

    TransportError
    └── HttpError             anything this module raises
        ├── HttpConnectError  could not connect (refused, DNS, TLS handshake)
        ├── HttpTimeout       a connect or per-read deadline passed
        └── HttpProtocolError the peer broke HTTP or closed the connection mid-response

Cancellation: cancelling a request closes its connection (it is never reused half-read).
"""

from __future__ import annotations

import logging
import ssl
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

import h11
import trio

from ....protocol.errors import TransportError

__all__ = [
    "HttpClientPool",
    "HttpConnectError",
    "HttpError",
    "HttpProtocolError",
    "HttpResponse",
    "HttpTimeout",
    "Origin",
    "split_url",
]

log = logging.getLogger("mcptrio.transports.http.client")

_READ_SIZE = 65536
_USER_AGENT = b"mcptrio"


class HttpError(TransportError):
    """Base of every error the HTTP client raises."""


class HttpConnectError(HttpError):
    """The connection could not be established."""


class HttpTimeout(HttpError):
    """A connect or read deadline passed."""


class HttpProtocolError(HttpError):
    """The peer broke the HTTP protocol or closed the connection mid-exchange."""


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
    """One keep-alive connection: a trio stream and its h11 state machine."""

    def __init__(self, stream: trio.abc.Stream, origin: Origin) -> None:
        self.stream = stream
        self.origin = origin
        self.h11 = h11.Connection(our_role=h11.CLIENT)
        self.closed = False

    def looks_reusable(self) -> bool:
        """Whether an idle connection still seems open (a closed one polls readable)."""
        if self.closed or self.h11.our_state is not h11.IDLE:
            return False
        stream = self.stream
        if isinstance(stream, trio.SSLStream):
            stream = stream.transport_stream
        if isinstance(stream, trio.SocketStream):
            return not stream.socket.is_readable()
        return True

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            await trio.aclose_forcefully(self.stream)


class HttpResponse:
    """A response whose head has arrived; the body is read with :meth:`receive_some`.

    Only valid inside the ``async with pool.request(...)`` block that produced it.
    """

    def __init__(
        self,
        connection: _Connection,
        head: h11.Response,
        read_timeout: float,
    ) -> None:
        self._connection = connection
        self.status: int = head.status_code
        self.reason: str = head.reason.decode("latin-1")
        self.headers: list[tuple[bytes, bytes]] = [(k.lower(), v) for k, v in head.headers]
        self.read_timeout = read_timeout
        self.complete = False

    def header(self, name: bytes) -> bytes | None:
        """The first value of header ``name`` (lower-case), or ``None``."""
        for key, value in self.headers:
            if key == name:
                return value
        return None

    @property
    def content_type(self) -> str:
        """The media type, lower-case, without parameters (``""`` when absent)."""
        value = self.header(b"content-type") or b""
        return value.split(b";", 1)[0].strip().lower().decode("latin-1")

    async def receive_some(self) -> bytes:
        """The next piece of the body; ``b""`` once it is complete.

        Raises :class:`HttpTimeout` when nothing arrives for ``read_timeout`` seconds and
        :class:`HttpProtocolError` when the connection breaks first.
        """
        conn = self._connection
        while not self.complete:
            event = await _next_event(conn, self.read_timeout)
            if isinstance(event, h11.Data):
                if event.data:
                    return bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self.complete = True
            else:
                raise HttpProtocolError(f"Unexpected HTTP event {type(event).__name__}")
        await trio.lowlevel.checkpoint()
        return b""

    async def read(self, limit: int) -> bytes | None:
        """The whole body, or ``None`` if it is longer than ``limit`` bytes (then unread)."""
        parts: list[bytes] = []
        size = 0
        while chunk := await self.receive_some():
            size += len(chunk)
            if size > limit:
                return None
            parts.append(chunk)
        return b"".join(parts)

    def drain_buffered(self) -> None:
        """Consume what is already buffered without waiting, to see whether the body ended."""
        h = self._connection.h11
        while not self.complete:
            try:
                event = h.next_event()
            except h11.RemoteProtocolError:
                return
            if isinstance(event, h11.EndOfMessage):
                self.complete = True
            elif not isinstance(event, h11.Data):
                return


async def _next_event(conn: _Connection, read_timeout: float) -> h11.Event | type[h11.PAUSED]:
    while True:
        try:
            event = conn.h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise HttpProtocolError(f"Invalid HTTP from the server: {exc}") from None
        if event is not h11.NEED_DATA:
            if isinstance(event, h11.ConnectionClosed):
                raise HttpProtocolError("The server closed the connection mid-response")
            assert event is h11.PAUSED or isinstance(event, h11.Event)
            return event
        with trio.move_on_after(read_timeout) as scope:
            try:
                data = await conn.stream.receive_some(_READ_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise HttpProtocolError(f"The connection broke: {exc}") from None
        if scope.cancelled_caught:
            raise HttpTimeout(f"No data from the server for {read_timeout} s")
        try:
            conn.h11.receive_data(bytes(data))
        except h11.RemoteProtocolError as exc:
            raise HttpProtocolError(f"Invalid HTTP from the server: {exc}") from None


class _OriginPool:
    def __init__(self, max_connections: int) -> None:
        self.slots = trio.Semaphore(max_connections)
        self.idle: deque[_Connection] = deque()


class HttpClientPool:
    """Keep-alive HTTP/1.1 connections, pooled per origin.

    ``request`` is the only operation; ``aclose`` closes every idle connection (busy ones close
    when their request finishes). The pool itself holds no task.
    """

    def __init__(
        self,
        *,
        max_connections: int = 64,
        max_idle: int = 8,
        ssl_context: ssl.SSLContext | None = None,
        connect_timeout: float = 30.0,
        read_timeout: float = 30.0,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.max_connections = max_connections
        self.max_idle = max_idle
        self._ssl_context = ssl_context
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._origins: dict[Origin, _OriginPool] = {}
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

    @asynccontextmanager
    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Sequence[tuple[str | bytes, str | bytes]] = (),
        body: bytes = b"",
        read_timeout: float | None = None,
    ) -> AsyncIterator[HttpResponse]:
        """Send one request and yield the response once its head has arrived.

        Leaving the block releases the connection: back to the pool if the body was read to the
        end and the server keeps it alive, closed otherwise. ``read_timeout`` overrides the
        pool's per-read deadline for this response.
        """
        if self._closed:
            raise trio.ClosedResourceError("The HTTP client pool is closed")
        origin, target = split_url(url)
        pool = self._origins.get(origin)
        if pool is None:
            pool = self._origins[origin] = _OriginPool(self.max_connections)
        timeout = self.read_timeout if read_timeout is None else read_timeout
        all_headers = _request_headers(origin, headers, body, method)
        request = h11.Request(method=method, target=target, headers=all_headers)
        with trio.move_on_after(self.connect_timeout) as slot_wait:
            await pool.slots.acquire()
        if slot_wait.cancelled_caught:
            raise HttpTimeout(f"No free connection to {origin.host}:{origin.port}")
        try:
            conn, response = await self._exchange(pool, origin, request, body, timeout)
            try:
                yield response
            except BaseException:
                await conn.aclose()
                raise
            await self._release(pool, conn, response)
        finally:
            pool.slots.release()

    async def _exchange(
        self,
        pool: _OriginPool,
        origin: Origin,
        request: h11.Request,
        body: bytes,
        timeout: float,
    ) -> tuple[_Connection, HttpResponse]:
        while pool.idle:
            conn = pool.idle.pop()
            if not conn.looks_reusable():
                await conn.aclose()
                continue
            try:
                return conn, await self._send(conn, request, body, timeout)
            except HttpProtocolError as exc:
                # A keep-alive connection the server closed while we picked it up: once more
                # on a fresh connection.
                log.debug("reused connection failed before the response (%s); retrying", exc)
                await conn.aclose()
                break
            except BaseException:
                await conn.aclose()
                raise
        conn = await self._connect(origin)
        try:
            return conn, await self._send(conn, request, body, timeout)
        except BaseException:
            await conn.aclose()
            raise

    async def _connect(self, origin: Origin) -> _Connection:
        context = self.ssl_context if origin.scheme == "https" else None
        stream: trio.abc.Stream | None = None
        with trio.move_on_after(self.connect_timeout) as scope:
            try:
                stream = await trio.open_tcp_stream(origin.host, origin.port)
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
                    f"Cannot connect to {origin.scheme}://{origin.host}:{origin.port}: {exc}"
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
        return _Connection(stream, origin)

    async def _send(
        self, conn: _Connection, request: h11.Request, body: bytes, timeout: float
    ) -> HttpResponse:
        h = conn.h11
        data = h.send(request) or b""
        if body:
            data += h.send(h11.Data(data=body)) or b""
        data += h.send(h11.EndOfMessage()) or b""
        with trio.move_on_after(timeout) as scope:
            try:
                await conn.stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise HttpProtocolError(f"The connection broke while sending: {exc}") from None
        if scope.cancelled_caught:
            raise HttpTimeout(f"The server did not take the request within {timeout} s")
        while True:
            event = await _next_event(conn, timeout)
            if isinstance(event, h11.InformationalResponse):
                continue
            if isinstance(event, h11.Response):
                return HttpResponse(conn, event, timeout)
            raise HttpProtocolError(f"Expected a response, got {type(event).__name__}")

    async def _release(self, pool: _OriginPool, conn: _Connection, response: HttpResponse) -> None:
        if not response.complete:
            response.drain_buffered()
        h = conn.h11
        if (
            response.complete
            and not self._closed
            and h.our_state is h11.DONE
            and h.their_state is h11.DONE
            and len(pool.idle) < self.max_idle
        ):
            h.start_next_cycle()
            pool.idle.append(conn)
            await trio.lowlevel.checkpoint()
            return
        await conn.aclose()

    async def aclose(self) -> None:
        """Close every idle connection; further requests raise ``trio.ClosedResourceError``."""
        self._closed = True
        for pool in self._origins.values():
            while pool.idle:
                await pool.idle.pop().aclose()
        await trio.lowlevel.checkpoint()


def _request_headers(
    origin: Origin,
    extra: Sequence[tuple[str | bytes, str | bytes]],
    body: bytes,
    method: str,
) -> list[tuple[bytes, bytes]]:
    headers: list[tuple[bytes, bytes]] = [(b"host", origin.host_header)]
    seen = {b"host"}
    for name, value in extra:
        key = (name.encode("latin-1") if isinstance(name, str) else name).lower()
        raw = value.encode("latin-1") if isinstance(value, str) else value
        headers.append((key, raw))
        seen.add(key)
    if b"user-agent" not in seen:
        headers.append((b"user-agent", _USER_AGENT))
    if body or method in ("POST", "PUT", "PATCH"):
        headers.append((b"content-length", str(len(body)).encode("ascii")))
    return headers
