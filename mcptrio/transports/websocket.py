"""The WebSocket transport: MCP over WebSocket, server and client.

MCP over WebSocket negotiates the subprotocol ``mcp`` and sends every frame of the session (one
JSON-RPC message, or a 2025-03-26 batch) as one *text* message. This module holds:

- :class:`WebSocketTransport`, the :class:`~mcptrio.runtime.transport.Transport` over any open
  WebSocket that offers :class:`WebSocketMessages`; the HTTP front ends'
  :class:`~mcptrio.transports.http.engine.exchange.WebSocketPeer` does.
- :func:`serve_websocket_session`, what an HTTP endpoint awaits once a request has upgraded:
  it checks the subprotocol, accepts, and runs one session until the socket closes.
- :func:`open_websocket_client_transport`, the client on trio-websocket;
  ``mcptrio.open_client("ws://...")`` goes through it.

The standalone server (trio-websocket, no HTTP front end) lives in
:mod:`mcptrio.transports.websocket_server`.

Close codes the transport uses (RFC 6455, section 7.4.1): 1000 when either side ends the session
normally, 1003 for a binary message (MCP frames are text), 1009 for a message over
``max_frame_size``, 1008 for a peer that takes no data for ``send_timeout`` seconds, and 1002
when the client finds the server did not select ``mcp``.

Errors the client raises while connecting (a branch of the tree in
:mod:`mcptrio.protocol.errors`)::

    TransportError, ConnectionError
    └── WebSocketHandshakeError       no MCP WebSocket came of it (network, timeout, no "mcp")
        └── WebSocketRejected         the server answered with an HTTP status instead
"""

from __future__ import annotations

import logging
import math
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import KW_ONLY, dataclass, field
from typing import Protocol, cast

import trio
import trio_websocket

from ..protocol.errors import TransportError
from ..runtime.nurseries import open_unwrapping_nursery
from ..runtime.session import Session, SessionFactory
from ..runtime.session_drain import requests_answered
from ..runtime.transport import DEFAULT_MAX_FRAME_SIZE, Frame, Outgoing, TransportAbilities
from .http.engine.exchange import Headers, HttpRequest, WebSocketClosed, WebSocketPeer

__all__ = [
    "CLOSE_GOING_AWAY",
    "CLOSE_MESSAGE_TOO_BIG",
    "CLOSE_NORMAL",
    "CLOSE_POLICY_VIOLATION",
    "CLOSE_PROTOCOL_ERROR",
    "CLOSE_UNSUPPORTED_DATA",
    "DEFAULT_CLOSE_TIMEOUT",
    "DEFAULT_HANDSHAKE_TIMEOUT",
    "DEFAULT_SEND_TIMEOUT",
    "MCP_SUBPROTOCOL",
    "WebSocketHandshakeError",
    "WebSocketMessages",
    "WebSocketRejected",
    "WebSocketTransport",
    "open_websocket_client_transport",
    "serve_websocket_session",
]

log = logging.getLogger("mcptrio.transports.websocket")

#: The subprotocol both sides must agree on.
MCP_SUBPROTOCOL = "mcp"

CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
CLOSE_PROTOCOL_ERROR = 1002
CLOSE_UNSUPPORTED_DATA = 1003
CLOSE_POLICY_VIOLATION = 1008
CLOSE_MESSAGE_TOO_BIG = 1009

#: How long a close handshake may take before the connection is dropped.
DEFAULT_CLOSE_TIMEOUT = 5.0
#: How long the peer may take to accept one outgoing message before it is given up on.
DEFAULT_SEND_TIMEOUT = 60.0
#: How long the opening handshake (request in, answer out) may take.
DEFAULT_HANDSHAKE_TIMEOUT = 10.0

# trio-websocket reads 4 KiB at a time by default; MCP messages are often bigger.
_RECEIVE_BUFFER_SIZE = 65536
# Messages trio-websocket may hold before its reader waits for the session to take them.
_MESSAGE_QUEUE_SIZE = 16


class WebSocketHandshakeError(TransportError, ConnectionError):
    """The client could not open an MCP WebSocket: network error, timeout, or no ``mcp``."""


class WebSocketRejected(WebSocketHandshakeError):
    """The server refused the upgrade with an HTTP status (403 bad Origin, 404 wrong path...)."""

    def __init__(self, status_code: int, body: bytes = b"") -> None:
        detail = body.decode("utf-8", "replace").strip()
        super().__init__(
            f"The server refused the WebSocket with HTTP {status_code}"
            + (f": {detail}" if detail else "")
        )
        self.status_code = status_code
        self.body = body


class WebSocketMessages(Protocol):
    """An open WebSocket, as :class:`WebSocketTransport` uses it.

    The part of :class:`~mcptrio.transports.http.engine.exchange.WebSocketPeer` that exists once the
    handshake is done; every peer a front end hands over is one.
    """

    async def receive_message(self, limit: int) -> str | bytes:
        """The next message; :class:`WebSocketClosed` once the connection has closed."""
        ...

    async def send_text(self, data: str) -> None:
        """Send one text message; :class:`WebSocketClosed` if the peer is gone."""
        ...

    async def aclose(self, code: int = 1000, reason: str = "") -> None:
        """Close the connection with ``code``; idempotent."""
        ...


@dataclass(eq=False)
class WebSocketTransport:
    """A :class:`~mcptrio.runtime.transport.Transport` over one open WebSocket.

    **Receiving.** Each text message is one frame, handed to the session as its UTF-8 bytes. A
    binary message is a protocol violation (MCP frames are text): the transport closes the
    connection with 1003 and input ends. A message over ``max_frame_size`` bytes also ends the
    connection, with 1009, rather than becoming an ``OversizedFrame``: WebSocket peers (the front
    ends' and trio-websocket alike) stop reading a message that grows past the limit, and a
    message cannot be skipped unread once its frames are on their way. Both cases are logged.
    When the peer closes (or the connection breaks), :meth:`receive` raises
    ``trio.EndOfChannel``, and does so again on every later call.

    **Sending.** Each :class:`~mcptrio.runtime.transport.Outgoing` frame goes out as one text
    message, in order. Backpressure is the peer's: ``send`` waits until the connection has taken
    each message, but no longer than ``send_timeout`` seconds per message (``None``: no limit).
    A peer that takes nothing for that long is considered dead: the connection is closed with
    1008 and ``trio.BrokenResourceError`` raised, as for a peer that has gone away. After
    :meth:`aclose`, ``send`` raises ``trio.ClosedResourceError``.

    **Closing.** :meth:`aclose` closes with 1000 and is idempotent. The close handshake is
    shielded from cancellation and bounded by ``close_timeout``, so that leaving a block because
    of a cancellation still says goodbye properly, and a peer that never answers delays nobody
    for longer than that.
    """

    peer: WebSocketMessages
    _: KW_ONLY
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
    send_timeout: float | None = DEFAULT_SEND_TIMEOUT
    close_timeout: float = DEFAULT_CLOSE_TIMEOUT
    #: The close code this side sent, once it has closed the connection.
    close_code: int | None = field(default=None, init=False)
    _input_ended: bool = field(default=False, init=False)
    _closed: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        if self.max_frame_size < 1:
            raise ValueError("max_frame_size must be at least 1")

    async def receive(self) -> Frame:
        """The next incoming frame; ``trio.EndOfChannel`` once the connection has closed."""
        if self._input_ended:
            await trio.lowlevel.checkpoint()
            raise trio.EndOfChannel
        limit = self.max_frame_size
        try:
            message = await self.peer.receive_message(limit)
        except WebSocketClosed:
            self._input_ended = True
            raise trio.EndOfChannel from None
        if isinstance(message, str):
            # surrogatepass: a front end that let malformed text through gets a parse error
            # answer from the session, not a crash here.
            data = message.encode("utf-8", "surrogatepass")
            if len(data) <= limit:
                return data
            # Reached when the peer measures text in characters (trio-websocket does).
            log.info(
                "closing a WebSocket: a %d-byte message is over the %d limit", len(data), limit
            )
            await self._close(CLOSE_MESSAGE_TOO_BIG, f"Message over {limit} bytes")
        else:
            log.info("closing a WebSocket: the peer sent a binary message")
            await self._close(CLOSE_UNSUPPORTED_DATA, "MCP over WebSocket uses text messages")
        raise trio.EndOfChannel

    async def send(self, frames: Sequence[Outgoing]) -> None:
        """Send each frame as one text message, in order."""
        if self._closed:
            raise trio.ClosedResourceError("the WebSocket transport is closed")
        send_text = self.peer.send_text
        timeout = self.send_timeout
        with trio.CancelScope() as scope:
            for frame in frames:
                if timeout is not None:
                    scope.deadline = trio.current_time() + timeout
                try:
                    await send_text(frame.data.decode("utf-8"))
                except WebSocketClosed:
                    raise trio.BrokenResourceError("the WebSocket peer has gone away") from None
            if not frames:
                await trio.lowlevel.checkpoint()
        if scope.cancelled_caught:
            log.warning("closing a WebSocket: the peer took no data for %s s", timeout)
            await self._close(CLOSE_POLICY_VIOLATION, "The peer stopped reading")
            raise trio.BrokenResourceError(f"the WebSocket peer took no data for {timeout} s")

    def abilities(self) -> TransportAbilities:
        # Writes go to a socket, which may block: nothing is taken without waiting.
        return TransportAbilities()

    async def aclose(self) -> None:
        """Close the connection normally (1000); safe to call more than once."""
        await self._close(CLOSE_NORMAL, "")

    async def go_away(self) -> None:
        """Close the connection as a server that is stopping (1001): its client reconnects."""
        await self._close(CLOSE_GOING_AWAY, "The server is stopping")

    async def _close(self, code: int, reason: str) -> None:
        if self._closed:
            await trio.lowlevel.checkpoint()
            return
        self._closed = True
        self._input_ended = True
        self.close_code = code
        deadline = trio.current_time() + self.close_timeout
        with trio.CancelScope(shield=True, deadline=deadline) as scope, suppress(WebSocketClosed):
            await self.peer.aclose(code, reason)
        if scope.cancelled_caught:
            log.info("WebSocket close handshake unfinished after %s s", self.close_timeout)


async def serve_websocket_session(
    factory: SessionFactory,
    request: HttpRequest,
    peer: WebSocketPeer,
    *,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
    send_timeout: float | None = DEFAULT_SEND_TIMEOUT,
    close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
    shutdown: trio.Event | None = None,
) -> None:
    """Run one MCP session over a WebSocket upgrade, then close the socket.

    This is what an HTTP endpoint's ``handle_websocket`` calls after it has checked Origin, Host
    and path. The client must offer the ``mcp`` subprotocol: the spec says nothing about a client
    that does not, and answering it with a subprotocol it never asked for breaks RFC 6455 (the
    python-sdk's server does that), so the upgrade is refused with **400** and a short text body
    instead. Otherwise the upgrade is accepted with ``mcp`` and ``factory.session(transport)``
    runs until the client closes the socket, the connection breaks, or the caller cancels;
    then the socket is closed with 1000 (see :class:`WebSocketTransport` for 1003 and 1009).

    Answering the upgrade is bounded by ``handshake_timeout``; a client too slow to take the
    answer is dropped. Cancelling the caller ends the session (its handlers are cancelled) and
    still closes the socket cleanly, within ``close_timeout``. Setting ``shutdown`` ends the
    session once the requests in flight have answered, closing with 1001 (going away).
    """
    who = request.client
    if MCP_SUBPROTOCOL not in peer.subprotocols:
        log.info("refusing a WebSocket from %s: subprotocol 'mcp' not offered", who)
        with trio.move_on_after(handshake_timeout), suppress(WebSocketClosed):
            await peer.reject(
                400, b"MCP over WebSocket needs the 'mcp' subprotocol (Sec-WebSocket-Protocol)"
            )
        return
    try:
        with trio.move_on_after(handshake_timeout) as handshake:
            await peer.accept(MCP_SUBPROTOCOL)
    except WebSocketClosed:
        log.info("dropping a WebSocket from %s: it went away during the handshake", who)
        return
    if handshake.cancelled_caught:
        log.info("dropping a WebSocket from %s: the handshake answer was not taken in time", who)
        return
    transport = WebSocketTransport(
        peer, max_frame_size=max_frame_size, send_timeout=send_timeout, close_timeout=close_timeout
    )
    try:
        session = factory.session(transport)
        log.debug("WebSocket session with %s started", who)
        async with trio.open_nursery() as nursery:
            if shutdown is not None:
                nursery.start_soon(_go_away_on, shutdown, session, transport)
            await session.run()
            nursery.cancel_scope.cancel()
    finally:
        await transport.aclose()
        log.debug("WebSocket session with %s ended", who)


async def _go_away_on(
    shutdown: trio.Event, session: Session, transport: WebSocketTransport
) -> None:
    await shutdown.wait()
    await requests_answered(session, math.inf)
    await transport.go_away()


class _ShieldedReaders:
    """Stands in for the nursery trio-websocket starts a connection's reader task in.

    A close handshake needs that reader: it reads the peer's answering Close. In the caller's
    nursery the reader dies with the caller's cancellation, so a block left because of a
    cancellation (``open_client`` always leaves that way, as does a server being stopped) would
    wait out ``close_timeout`` on every connection. Here the reader runs in a shielded scope in
    ``nursery``, and lives until :meth:`cancel`, which the owner calls once the close (bounded
    by its own deadline) is done, or as soon as it gives up on the connection.
    """

    def __init__(self, nursery: trio.Nursery) -> None:
        self._nursery = nursery
        self._scopes: list[trio.CancelScope] = []

    def start_soon(
        self, async_fn: Callable[..., Awaitable[object]], *args: object, name: object = None
    ) -> None:
        scope = trio.CancelScope(shield=True)
        self._scopes.append(scope)
        self._nursery.start_soon(self._run, scope, async_fn, args, name=name)

    @staticmethod
    async def _run(
        scope: trio.CancelScope,
        async_fn: Callable[..., Awaitable[object]],
        args: tuple[object, ...],
    ) -> None:
        with scope:
            await async_fn(*args)

    def as_nursery(self) -> trio.Nursery:
        # trio-websocket only calls start_soon on the nursery it is given.
        return cast(trio.Nursery, self)

    def cancel(self) -> None:
        for scope in self._scopes:
            scope.cancel()


class _TrioWebSocketPeer:
    """A :class:`WebSocketPeer` over trio-websocket, for the client and the standalone server.

    Server side it starts from the ``WebSocketRequest`` (:meth:`for_request`), client side from
    an already open connection. trio-websocket measures text messages in characters and closes
    with 1009 past its own ``max_message_size``; :class:`WebSocketTransport` checks the bytes.
    """

    def __init__(
        self,
        connection: trio_websocket.WebSocketConnection | None,
        request: trio_websocket.WebSocketRequest | None = None,
        stopping: trio.Event | None = None,
    ) -> None:
        self._connection = connection
        self._request = request
        self._stopping = trio.Event() if stopping is None else stopping

    @classmethod
    def for_request(
        cls, request: trio_websocket.WebSocketRequest, stopping: trio.Event | None = None
    ) -> _TrioWebSocketPeer:
        return cls(None, request, stopping)

    @property
    def stopping(self) -> trio.Event:
        return self._stopping

    @property
    def subprotocols(self) -> Sequence[str]:
        if self._request is not None:
            return self._request.proposed_subprotocols
        subprotocol = self._open().subprotocol
        return () if subprotocol is None else (subprotocol,)

    async def accept(
        self, subprotocol: str | None, headers: Sequence[tuple[bytes, bytes]] = ()
    ) -> None:
        if self._request is None or self._connection is not None:
            raise RuntimeError("this WebSocket is already open")
        self._connection = await self._request.accept(
            subprotocol=subprotocol, extra_headers=list(headers)
        )

    async def reject(self, status: int, body: bytes = b"", headers: Headers = ()) -> None:
        if self._request is None or self._connection is not None:
            raise RuntimeError("this WebSocket is already open")
        head = [*headers, (b"content-type", b"text/plain; charset=utf-8")] if body else [*headers]
        await self._request.reject(status, extra_headers=head, body=body or None)

    async def receive_message(self, limit: int) -> str | bytes:
        connection = self._open()
        try:
            message = await connection.get_message()
        except trio_websocket.ConnectionClosed:
            raise WebSocketClosed from None
        if isinstance(message, bytes) and len(message) > limit:
            await connection.aclose(CLOSE_MESSAGE_TOO_BIG, f"Message over {limit} bytes")
            raise WebSocketClosed
        return message

    async def send_text(self, data: str) -> None:
        try:
            await self._open().send_message(data)
        except trio_websocket.ConnectionClosed:
            raise WebSocketClosed from None

    async def aclose(self, code: int = 1000, reason: str = "") -> None:
        if self._connection is not None:
            await self._connection.aclose(code, reason or None)
        else:
            await trio.lowlevel.checkpoint()

    def _open(self) -> trio_websocket.WebSocketConnection:
        if self._connection is None:
            raise RuntimeError("this WebSocket has not been accepted")
        return self._connection


@asynccontextmanager
async def open_websocket_client_transport(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    connect_timeout: float = 10.0,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    ssl_context: ssl.SSLContext | None = None,
    send_timeout: float | None = DEFAULT_SEND_TIMEOUT,
    close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
) -> AsyncIterator[WebSocketTransport]:
    """Connect to an MCP WebSocket server and yield the client side of the transport.

    ``url`` is ``ws://`` or ``wss://`` (TLS with ``ssl_context``, or the system's default
    context). ``headers`` are sent with the upgrade request (an ``Authorization`` header, for
    example). The client offers the ``mcp`` subprotocol and refuses a server that does not
    select it: the connection is closed with 1002 and :class:`WebSocketHandshakeError` raised.

    Connecting (TCP, TLS and the upgrade) must finish within ``connect_timeout`` seconds. A
    server that answers the upgrade with an HTTP status raises :class:`WebSocketRejected`
    carrying it; a timeout or a network error raises :class:`WebSocketHandshakeError` (the
    original error is its ``__cause__``). A bad URL raises ``ValueError``.

    Leaving the block closes the WebSocket with 1000, even when leaving because of a
    cancellation (see :class:`WebSocketTransport`). If the server closes first, ``receive``
    raises ``trio.EndOfChannel`` and a session on top fails its pending calls at once.
    """
    extra_headers = [
        (name.encode("latin-1"), value.encode("latin-1")) for name, value in (headers or {}).items()
    ]
    connected = False
    try:
        async with open_unwrapping_nursery() as nursery:
            readers = _ShieldedReaders(nursery)
            transport: WebSocketTransport | None = None
            try:
                with trio.fail_after(connect_timeout):
                    connection = await trio_websocket.connect_websocket_url(
                        readers.as_nursery(),
                        url,
                        ssl_context,
                        subprotocols=[MCP_SUBPROTOCOL],
                        extra_headers=extra_headers,
                        message_queue_size=_MESSAGE_QUEUE_SIZE,
                        max_message_size=max_frame_size,
                        receive_buffer_size=_RECEIVE_BUFFER_SIZE,
                    )
                transport = WebSocketTransport(
                    _TrioWebSocketPeer(connection),
                    max_frame_size=max_frame_size,
                    send_timeout=send_timeout,
                    close_timeout=close_timeout,
                )
                if connection.subprotocol != MCP_SUBPROTOCOL:
                    await transport._close(
                        CLOSE_PROTOCOL_ERROR, "The server must select the 'mcp' subprotocol"
                    )
                    raise WebSocketHandshakeError(
                        f"{url} did not select the 'mcp' subprotocol "
                        f"(it selected {connection.subprotocol!r})"
                    )
                connected = True
                yield transport
            finally:
                if transport is not None:
                    await transport.aclose()
                readers.cancel()
    except trio_websocket.ConnectionRejected as exc:
        if connected:
            raise
        raise WebSocketRejected(exc.status_code, exc.body or b"") from None
    except trio.TooSlowError:
        if connected:
            raise
        raise WebSocketHandshakeError(
            f"No WebSocket handshake with {url} within {connect_timeout} s"
        ) from None
    except (OSError, trio.BrokenResourceError) as exc:
        if connected or isinstance(exc, WebSocketHandshakeError):
            raise
        raise WebSocketHandshakeError(f"Could not open a WebSocket to {url}: {exc}") from exc
