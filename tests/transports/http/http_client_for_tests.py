"""A tiny raw HTTP/1.1 client for tests, on h11 and trio: exact status codes, headers, bytes.

    async with open_test_connection(base_url) as conn:
        response = await conn.request("POST", "/mcp", headers=[("content-type", "...")], body=b"{}")
        assert response.status == 200
        assert response.header("content-type") == b"application/json"

        async with conn.stream("GET", "/mcp", headers=[("accept", "text/event-stream")]) as events:
            assert events.status == 200
            first = await events.next_chunk()       # bytes as the server flushed them
            async for piece in events.chunks():     # the rest, until the body ends
                ...

        responses = await conn.pipeline([("GET", "/a"), ("GET", "/b")])  # one write, in order

One connection is kept alive across requests (``conn.reused`` counts reuses); a response with
``connection: close`` ends it, and the next request then fails clearly. Every read has a
deadline (``timeout``), so a test never hangs on a silent server. ``send_raw``/``receive_raw``
are there for what h11 refuses to send (malformed requests, slow heads).
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import h11
import trio
import trustme

__all__ = [
    "StreamingResponse",
    "TestConnection",
    "TestResponse",
    "open_test_connection",
    "tls_contexts",
]

HeaderInput = Iterable[tuple[str | bytes, str | bytes]]


def _b(value: str | bytes) -> bytes:
    return value.encode("latin-1") if isinstance(value, str) else value


class TestResponse:
    """A complete response: ``status``, ``headers`` (lower-case names, bytes) and ``body``."""

    __test__ = False

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name: str) -> bytes | None:
        wanted = name.lower().encode("latin-1")
        for key, value in self.headers:
            if key == wanted:
                return value
        return None

    def json(self) -> Any:
        return json.loads(self.body)

    def __repr__(self) -> str:
        return f"<TestResponse {self.status} {self.body[:200]!r}>"


class StreamingResponse:
    """A response whose body is read piece by piece, as the server sends it."""

    def __init__(self, connection: TestConnection, response: h11.Response) -> None:
        self._connection = connection
        self.status = response.status_code
        self.headers = list(response.headers)
        self.finished = False

    def header(self, name: str) -> bytes | None:
        return TestResponse(self.status, self.headers, b"").header(name)

    async def next_chunk(self) -> bytes | None:
        """The next piece of body, or ``None`` once the body has ended."""
        if self.finished:
            return None
        event = await self._connection._next_event()
        if isinstance(event, h11.Data):
            return bytes(event.data)
        self.finished = True
        return None

    async def chunks(self) -> AsyncIterator[bytes]:
        while (piece := await self.next_chunk()) is not None:
            yield piece

    async def read_all(self) -> bytes:
        return b"".join([piece async for piece in self.chunks()])


class TestConnection:
    """One client connection; see the module docstring."""

    __test__ = False

    def __init__(self, stream: trio.abc.Stream, host: str, timeout: float) -> None:
        self.socket_stream = stream
        self.host = host
        self.timeout = timeout
        self.reused = 0
        self._h11 = h11.Connection(h11.CLIENT)
        self._used = False

    def _request_event(self, method: str, target: str, headers: HeaderInput, body: bytes | None):
        head = [(_b(k), _b(v)) for k, v in headers]
        names = {k.lower() for k, _ in head}
        if b"host" not in names:
            head.insert(0, (b"host", self.host.encode()))
        if (
            body is not None
            and b"content-length" not in names
            and b"transfer-encoding" not in names
        ):
            head.append((b"content-length", b"%d" % len(body)))
        return h11.Request(method=method, target=target, headers=head)

    async def _next_event(self) -> Any:
        while True:
            event = self._h11.next_event()
            if event is h11.NEED_DATA:
                with trio.fail_after(self.timeout):
                    data = await self.socket_stream.receive_some(65536)
                self._h11.receive_data(data)
                continue
            return event

    def _start_cycle(self) -> None:
        if self._used:
            if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
                self._h11.start_next_cycle()
                self.reused += 1
            else:
                raise RuntimeError(
                    f"connection not reusable (client {self._h11.our_state}, "
                    f"server {self._h11.their_state})"
                )
        self._used = True

    async def _send_request(
        self, method: str, target: str, headers: HeaderInput, body: bytes | Iterable[bytes]
    ) -> None:
        self._start_cycle()
        if isinstance(body, bytes):
            data = self._h11.send(self._request_event(method, target, headers, body))
            if body:
                data += self._h11.send(h11.Data(data=body))
            data += self._h11.send(h11.EndOfMessage())
            await self.socket_stream.send_all(data)
            return
        # An iterable of pieces: sent chunked, one write per piece.
        await self.socket_stream.send_all(
            self._h11.send(
                self._request_event(
                    method, target, [*headers, ("transfer-encoding", "chunked")], None
                )
            )
        )
        for piece in body:
            await self.socket_stream.send_all(self._h11.send(h11.Data(data=piece)))
        await self.socket_stream.send_all(self._h11.send(h11.EndOfMessage()))

    async def _read_head(self) -> h11.Response:
        while True:
            event = await self._next_event()
            if isinstance(event, h11.Response):
                return event
            if isinstance(event, h11.InformationalResponse):
                continue
            raise RuntimeError(f"expected a response, got {event!r}")

    async def request(
        self,
        method: str,
        target: str,
        *,
        headers: HeaderInput = (),
        body: bytes | Iterable[bytes] = b"",
    ) -> TestResponse:
        """Send one request (``body`` as bytes, or an iterable of pieces sent chunked)."""
        await self._send_request(method, target, headers, body)
        head = await self._read_head()
        parts = []
        while True:
            event = await self._next_event()
            if isinstance(event, h11.Data):
                parts.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            else:
                raise RuntimeError(f"unexpected {event!r} in a response body")
        return TestResponse(head.status_code, list(head.headers), b"".join(parts))

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        target: str,
        *,
        headers: HeaderInput = (),
        body: bytes | Iterable[bytes] = b"",
    ) -> AsyncIterator[StreamingResponse]:
        """Send one request and read its body incrementally (for SSE)."""
        await self._send_request(method, target, headers, body)
        yield StreamingResponse(self, await self._read_head())

    async def pipeline(
        self, requests: Sequence[tuple[str, str] | tuple[str, str, bytes]]
    ) -> list[TestResponse]:
        """Send all ``requests`` in one write, then read their responses in order."""
        if self._used:
            raise RuntimeError("pipeline() needs a fresh connection")
        self._used = True
        wire = b""
        clients = []
        for method, target, *rest in requests:
            body = rest[0] if rest else b""
            client = h11.Connection(h11.CLIENT)
            wire += client.send(self._request_event(method, target, (), body))
            if body:
                wire += client.send(h11.Data(data=body))
            wire += client.send(h11.EndOfMessage())
            clients.append(client)
        await self.socket_stream.send_all(wire)
        responses = []
        leftover = b""
        for client in clients:
            self._h11 = client
            if leftover:
                client.receive_data(leftover)
            head = await self._read_head()
            parts = []
            while not isinstance(event := await self._next_event(), h11.EndOfMessage):
                parts.append(bytes(event.data))
            responses.append(TestResponse(head.status_code, list(head.headers), b"".join(parts)))
            leftover = bytes(client.trailing_data[0])
        return responses

    async def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (the h11 state is bypassed: use a fresh connection)."""
        self._used = True
        await self.socket_stream.send_all(data)

    async def receive_raw(self) -> bytes:
        """Everything the server sends until it closes the connection (within ``timeout``)."""
        parts = []
        with trio.fail_after(self.timeout):
            while True:
                try:
                    data = await self.socket_stream.receive_some(65536)
                except trio.BrokenResourceError:
                    break
                if not data:
                    break
                parts.append(data)
        return b"".join(parts)

    async def raw_status(self) -> int:
        """The status code of the first response in :meth:`receive_raw`."""
        data = await self.receive_raw()
        if not data.startswith(b"HTTP/1."):
            raise RuntimeError(f"no HTTP response, got {data[:100]!r}")
        return int(data.split(b" ", 2)[1])


@asynccontextmanager
async def open_test_connection(
    base_url: str,
    *,
    timeout: float = 10.0,
    ssl_context: ssl.SSLContext | None = None,
    local_address: str | None = None,
) -> AsyncIterator[TestConnection]:
    """Open one HTTP/1.1 connection to ``base_url`` (``http://`` or ``https://``), from
    ``local_address`` when given (``127.0.0.2``: another client on loopback)."""
    parts = urlsplit(base_url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    with trio.fail_after(timeout):
        stream: trio.abc.Stream = await trio.open_tcp_stream(
            host, port, local_address=local_address
        )
    if parts.scheme == "https":
        context = ssl_context or ssl.create_default_context()
        stream = trio.SSLStream(stream, context, server_hostname=host, https_compatible=True)
    try:
        yield TestConnection(stream, parts.netloc, timeout)
    finally:
        with trio.CancelScope(shield=True):
            await stream.aclose()


def tls_contexts(host: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context holding a certificate for ``host`` from a new test CA, and a client
    context that trusts that CA."""
    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(host).configure_cert(server_context)
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    return server_context, client_context
