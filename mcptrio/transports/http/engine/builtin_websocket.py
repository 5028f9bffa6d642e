"""WebSocket upgrades on the built-in server: a wsproto-based :class:`~.exchange.WebSocketPeer`.

The built-in server has already parsed the upgrade request; wsproto is handed that head (its
``initiate_upgrade_connection``) and the bytes that followed it, and from then on owns the
connection. No compression extension is offered, so a message's size on the wire is its size.

Reading happens in whichever task calls :meth:`WsprotoPeer.receive_message`; every write (a
message, a pong, a close) goes through one lock, so a reader answering a ping never interleaves
its frame with a concurrent :meth:`WsprotoPeer.send_text`. Each write has a deadline.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence

import h11
import trio
import wsproto
import wsproto.events as ws_events
from wsproto.connection import ConnectionState
from wsproto.utilities import LocalProtocolError, RemoteProtocolError

from .exchange import Headers, HttpApp, HttpRequest, WebSocketClosed
from .parser import RequestHead

__all__ = ["WsprotoPeer", "serve_websocket_upgrade"]

logger = logging.getLogger("mcptrio.transports.http")

_RECEIVE_SIZE = 65536


class WsprotoPeer:
    """:class:`~.exchange.WebSocketPeer` over a trio stream with wsproto."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        connection: wsproto.WSConnection,
        subprotocols: Sequence[str],
        write_timeout: float,
        stopping: trio.Event,
    ) -> None:
        self._stream = stream
        self._stopping = stopping
        self._ws = connection
        self._subprotocols = tuple(subprotocols)
        self._write_timeout = write_timeout
        self._send_lock = trio.Lock()
        self._events: list[ws_events.Event] = []
        # "pending" until accept/reject; then "open", "rejected" or "closed".
        self.state = "pending"

    @property
    def subprotocols(self) -> Sequence[str]:
        return self._subprotocols

    @property
    def stopping(self) -> trio.Event:
        return self._stopping

    async def _write(self, event: ws_events.Event) -> None:
        async with self._send_lock:
            try:
                data = self._ws.send(event)
            except LocalProtocolError as error:
                raise WebSocketClosed(str(error)) from None
            with trio.move_on_after(self._write_timeout) as scope:
                try:
                    await self._stream.send_all(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
                    self.state = "closed"
                    raise WebSocketClosed("the connection broke") from error
            if scope.cancelled_caught:
                self.state = "closed"
                raise WebSocketClosed("writing to the peer timed out")

    async def accept(self, subprotocol: str | None, headers: Headers = ()) -> None:
        if self.state != "pending":
            raise RuntimeError("the WebSocket handshake was already answered")
        self.state = "open"
        await self._write(
            ws_events.AcceptConnection(subprotocol=subprotocol, extra_headers=list(headers))
        )

    async def reject(self, status: int, body: bytes = b"", headers: Headers = ()) -> None:
        if self.state != "pending":
            raise RuntimeError("the WebSocket handshake was already answered")
        self.state = "rejected"
        head = [(b"content-length", b"%d" % len(body)), (b"connection", b"close"), *headers]
        if body:
            head.append((b"content-type", b"text/plain; charset=utf-8"))
        await self._write(
            ws_events.RejectConnection(status_code=status, headers=head, has_body=bool(body))
        )
        if body:
            await self._write(ws_events.RejectData(data=body, body_finished=True))

    async def _next_event(self) -> ws_events.Event:
        while not self._events:
            self._events.extend(self._ws.events())
            if self._events:
                break
            try:
                data = await self._stream.receive_some(_RECEIVE_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            try:
                self._ws.receive_data(bytes(data) if data else None)
            except RemoteProtocolError as error:
                self.state = "closed"
                raise WebSocketClosed(str(error)) from None
        return self._events.pop(0)

    async def receive_message(self, limit: int) -> str | bytes:
        if self.state != "open":
            raise WebSocketClosed("the WebSocket is not open")
        parts: list[str | bytes] = []
        size = 0
        while True:
            event = await self._next_event()
            if isinstance(event, ws_events.Message):
                size += len(event.data)
                if size > limit:
                    await self.aclose(1009, "message too big")
                    raise WebSocketClosed(f"message over {limit} bytes")
                parts.append(event.data)
                if event.message_finished:
                    if isinstance(event, ws_events.TextMessage):
                        return "".join(parts)  # type: ignore[arg-type]
                    return b"".join(parts)  # type: ignore[arg-type]
            elif isinstance(event, ws_events.Ping):
                with contextlib.suppress(WebSocketClosed):
                    await self._write(event.response())
            elif isinstance(event, ws_events.CloseConnection):
                if self.state == "open" and self._ws.state is ConnectionState.REMOTE_CLOSING:
                    with contextlib.suppress(WebSocketClosed):
                        await self._write(event.response())
                elif self.state == "open" and self._ws.state is ConnectionState.OPEN:
                    # Not the peer's close: wsproto could not parse what the peer sent (bad
                    # UTF-8 is 1007, a bad frame 1002). RFC 6455 section 7.1.7: fail the
                    # connection by sending that close, so the peer learns why.
                    await self.aclose(event.code, event.reason or "")
                    raise WebSocketClosed(f"protocol error ({event.code}): {event.reason}")
                self.state = "closed"
                raise WebSocketClosed(f"closed by the peer ({event.code})")

    async def send_text(self, data: str) -> None:
        if self.state != "open":
            raise WebSocketClosed("the WebSocket is not open")
        await self._write(ws_events.TextMessage(data=data))

    async def aclose(self, code: int = 1000, reason: str = "") -> None:
        if self.state != "open":
            return
        self.state = "closed"
        if self._ws.state is ConnectionState.OPEN:
            with contextlib.suppress(WebSocketClosed):
                await self._write(ws_events.CloseConnection(code=code, reason=reason))


async def serve_websocket_upgrade(
    stream: trio.abc.Stream,
    app: HttpApp,
    request: HttpRequest,
    head: RequestHead,
    unparsed: bytes,
    write_timeout: float,
    stopping: trio.Event,
) -> None:
    """Run ``app.handle_websocket`` for an upgrade request whose head was already parsed;
    ``stopping`` is set when the server stops gracefully (see ``WebSocketPeer.stopping``).

    A request wsproto does not accept as a WebSocket handshake gets 400. If the app returns
    without answering the handshake it gets 500 (403 would hide the bug); an accepted socket
    the app left open is closed with 1000 (1011 if the app raised).
    """
    connection = wsproto.WSConnection(wsproto.ConnectionType.SERVER)
    try:
        connection.initiate_upgrade_connection(head.headers, head.target)
        handshake = next(connection.events(), None)
    except (RemoteProtocolError, LocalProtocolError, h11.ProtocolError):
        handshake = None
    if not isinstance(handshake, ws_events.Request):
        body = b"invalid WebSocket upgrade request"
        response = (
            b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\n"
            b"connection: close\r\ncontent-length: %d\r\n\r\n%b" % (len(body), body)
        )
        with trio.move_on_after(write_timeout):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await stream.send_all(response)
        return
    peer = WsprotoPeer(stream, connection, handshake.subprotocols, write_timeout, stopping)
    if unparsed:
        connection.receive_data(unparsed)
    failed = False
    try:
        await app.handle_websocket(request, peer)
    except (WebSocketClosed, trio.BrokenResourceError):
        pass
    except Exception:
        failed = True
        logger.exception("WebSocket handler for %s failed", request.path)
    try:
        if peer.state == "pending":
            await peer.reject(500, b"the WebSocket handler did not answer the handshake")
        else:
            await peer.aclose(1011 if failed else 1000)
    except WebSocketClosed:
        pass
