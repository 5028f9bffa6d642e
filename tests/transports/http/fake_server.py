"""A tiny scripted HTTP/1.1 server on trio + h11, for testing the HTTP client side exactly.

Each test gives a handler ``async def handler(request, exchange)``; it answers through the
exchange (whole, streamed, or by cutting the connection) and may keep state of its own.
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial

import h11
import trio


@dataclass
class FakeRequest:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeServerStats:
    connections: int = 0
    requests: list[FakeRequest] = field(default_factory=list)


class Cut(Exception):
    """Raised inside the server to drop the connection without finishing the response."""


class FakeExchange:
    def __init__(self, stream: trio.abc.Stream, conn: h11.Connection) -> None:
        self._stream = stream
        self._conn = conn
        self.keep_alive = True

    async def respond(
        self, status: int, headers: list[tuple[str, str]] | None = None, body: bytes = b""
    ) -> None:
        hdrs = [*(headers or []), ("content-length", str(len(body)))]
        await self.start(status, hdrs)
        if body:
            await self.send(body)
        await self.end()

    async def start(self, status: int, headers: list[tuple[str, str]] | None = None) -> None:
        hdrs = list(headers or [])
        if not any(k.lower() == "content-length" for k, _ in hdrs):
            hdrs.append(("transfer-encoding", "chunked"))
        if not self.keep_alive:
            hdrs.append(("connection", "close"))
        await self._write(h11.Response(status_code=status, headers=hdrs))

    async def send(self, data: bytes) -> None:
        await self._write(h11.Data(data=data))

    async def end(self) -> None:
        await self._write(h11.EndOfMessage())

    async def _write(self, event: h11.Event) -> None:
        data = self._conn.send(event)
        if data:
            await self._stream.send_all(data)


Handler = Callable[[FakeRequest, FakeExchange], Awaitable[None]]


async def _serve_connection(
    handler: Handler, stats: FakeServerStats, stream: trio.abc.Stream
) -> None:
    stats.connections += 1
    conn = h11.Connection(our_role=h11.SERVER)
    try:
        while True:
            request: h11.Request | None = None
            body = bytearray()
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    data = await stream.receive_some(65536)
                    conn.receive_data(bytes(data))
                    continue
                if isinstance(event, h11.Request):
                    request = event
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    break
                elif isinstance(event, h11.ConnectionClosed):
                    return
            assert request is not None
            fake = FakeRequest(
                request.method.decode(),
                request.target.decode(),
                {k.decode().lower(): v.decode() for k, v in request.headers},
                bytes(body),
            )
            stats.requests.append(fake)
            exchange = FakeExchange(stream, conn)
            await handler(fake, exchange)
            if conn.our_state is h11.MUST_CLOSE or not exchange.keep_alive:
                return
            conn.start_next_cycle()
    except (Cut, trio.BrokenResourceError, trio.ClosedResourceError, h11.RemoteProtocolError):
        return
    finally:
        await trio.aclose_forcefully(stream)


async def serve_fake_http(
    handler: Handler,
    stats: FakeServerStats,
    *,
    ssl_context: ssl.SSLContext | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``handler`` on 127.0.0.1, a free port; reports the port."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    if ssl_context is not None:
        listeners = [
            trio.SSLListener(listener, ssl_context, https_compatible=True)  # type: ignore[misc]
            for listener in listeners
        ]
    async with trio.open_nursery() as nursery:
        await nursery.start(
            trio.serve_listeners, partial(_serve_connection, handler, stats), listeners
        )
        task_status.started(port)
        await trio.sleep_forever()
