"""A standalone MCP WebSocket server on trio-websocket, for when no HTTP front end is wanted.

::

    url = await nursery.start(partial(serve_websocket, server))   # "ws://127.0.0.1:PORT/mcp"

Each TCP connection goes through the same steps, every one of them bounded in time:

1. the opening handshake (TLS first with ``ssl_context``) must arrive within
   ``handshake_timeout`` seconds, else the connection is dropped;
2. a request for another path is refused with **404**;
3. a request whose ``Origin`` is not allowed is refused with **403** (see :func:`origin_allowed`);
4. past ``max_connections`` open sessions, a request is refused with **503**;
5. :func:`~mcptrio.transports.websocket.serve_websocket_session` takes over: a client that did
   not offer the ``mcp`` subprotocol gets **400**, any other one session until the socket
   closes.

Every connection's tasks live in the server's nursery; cancelling the server ends every session
and closes each socket with 1000 (within ``close_timeout``). A connection that fails in an
unexpected way is logged and closed without disturbing the others.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import trio
import trio_websocket

from .base import DEFAULT_MAX_FRAME_SIZE
from .http.engine.exchange import Headers, header
from .websocket import (
    _MESSAGE_QUEUE_SIZE,
    _RECEIVE_BUFFER_SIZE,
    DEFAULT_CLOSE_TIMEOUT,
    DEFAULT_HANDSHAKE_TIMEOUT,
    DEFAULT_SEND_TIMEOUT,
    SessionFactory,
    _ShieldedReaders,
    _TrioWebSocketPeer,
    serve_websocket_session,
)

__all__ = ["DEFAULT_MAX_CONNECTIONS", "origin_allowed", "serve_websocket"]

log = logging.getLogger("mcptrio.transports.websocket")

#: Open sessions a standalone server holds at once by default.
DEFAULT_MAX_CONNECTIONS = 1024

_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def origin_allowed(origin: bytes | None, allowed_origins: Collection[str] | None) -> bool:
    """Whether a request with this ``Origin`` header may open a session.

    A request without ``Origin`` is allowed: browsers always send one on a WebSocket upgrade,
    so its absence means a non-browser client, which DNS rebinding cannot reach. With
    ``allowed_origins=None`` only ``http``/``https`` origins on ``localhost``, ``127.0.0.1`` or
    ``[::1]`` (any port) are allowed; otherwise the origin must equal one of ``allowed_origins``
    (compared case-insensitively, a trailing ``/`` ignored), and localhost is not implied.
    """
    if origin is None:
        return True
    text = origin.decode("latin-1").strip().lower().rstrip("/")
    if allowed_origins is not None:
        return text in {allowed.lower().rstrip("/") for allowed in allowed_origins}
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.hostname in _LOOPBACK_HOSTS


@dataclass(frozen=True, slots=True)
class _HandshakeRequest:
    """The upgrade request, as an :class:`~mcptrio.transports.http.engine.exchange.HttpRequest`.

    wsproto keeps ``Host`` and ``Sec-WebSocket-Extensions`` to itself, so ``headers`` lacks
    them; ``Sec-WebSocket-Protocol`` is put back from the offered subprotocols.
    """

    path: str
    query_string: bytes
    headers: Headers
    client: tuple[str, int] | None
    scheme: str
    method: str = "GET"

    @classmethod
    def of(cls, request: trio_websocket.WebSocketRequest, scheme: str) -> _HandshakeRequest:
        target, _, query = request.path.partition("?")
        headers = list(request.headers)
        if request.proposed_subprotocols:
            offered = ", ".join(request.proposed_subprotocols)
            headers.append((b"sec-websocket-protocol", offered.encode("latin-1")))
        client: tuple[str, int] | None = None
        try:
            remote = request.remote
        except OSError:
            pass  # the client has already gone; the session will find out soon enough
        else:
            if isinstance(remote, trio_websocket.Endpoint):
                client = (str(remote.address), remote.port)
        return cls(unquote(target), query.encode("latin-1"), headers, client, scheme)

    async def read_body(self, limit: int) -> bytes:
        """An upgrade request has no body."""
        await trio.lowlevel.checkpoint()
        return b""


class _Endpoint:
    """Takes TCP connections through the steps in the module docstring."""

    def __init__(
        self,
        factory: SessionFactory,
        *,
        path: str,
        allowed_origins: Collection[str] | None,
        max_frame_size: int,
        max_connections: int,
        handshake_timeout: float,
        send_timeout: float | None,
        close_timeout: float,
        scheme: str,
    ) -> None:
        self.factory = factory
        self.path = path
        self.allowed_origins = None if allowed_origins is None else tuple(allowed_origins)
        self.max_frame_size = max_frame_size
        self.max_connections = max_connections
        self.handshake_timeout = handshake_timeout
        self.send_timeout = send_timeout
        self.close_timeout = close_timeout
        self.scheme = scheme
        self.open_sessions = 0

    async def serve_connection(self, stream: trio.abc.Stream) -> None:
        # The actor boundary of one connection: whatever goes wrong here stays here.
        try:
            async with trio.open_nursery() as nursery:
                readers = _ShieldedReaders(nursery)
                try:
                    await self._serve(readers, stream)
                finally:
                    readers.cancel()
        except Exception:
            log.exception("WebSocket connection failed")
        finally:
            with trio.CancelScope(shield=True, deadline=trio.current_time() + self.close_timeout):
                await stream.aclose()

    async def _serve(self, readers: _ShieldedReaders, stream: trio.abc.Stream) -> None:
        request: trio_websocket.WebSocketRequest | None = None
        with trio.move_on_after(self.handshake_timeout):
            request = await trio_websocket.wrap_server_stream(
                readers.as_nursery(),
                stream,
                message_queue_size=_MESSAGE_QUEUE_SIZE,
                max_message_size=self.max_frame_size,
                receive_buffer_size=_RECEIVE_BUFFER_SIZE,
            )
        if request is None:
            log.info(
                "dropping a connection: no WebSocket handshake in %s s", self.handshake_timeout
            )
            return
        http_request = _HandshakeRequest.of(request, self.scheme)
        refusal: tuple[int, bytes] | None = None
        if http_request.path != self.path:
            refusal = 404, b"Not Found"
        elif not origin_allowed(header(http_request.headers, b"origin"), self.allowed_origins):
            refusal = 403, b"Forbidden: Origin not allowed"
        elif self.open_sessions >= self.max_connections:
            refusal = 503, b"Too many sessions; try again later"
        if refusal is not None:
            status, body = refusal
            log.info("refusing a WebSocket from %s with %d", http_request.client, status)
            with trio.move_on_after(self.handshake_timeout):
                await request.reject(
                    status, extra_headers=[(b"content-type", b"text/plain")], body=body
                )
            return
        self.open_sessions += 1
        try:
            await serve_websocket_session(
                self.factory,
                http_request,
                _TrioWebSocketPeer.for_request(request),
                max_frame_size=self.max_frame_size,
                handshake_timeout=self.handshake_timeout,
                send_timeout=self.send_timeout,
                close_timeout=self.close_timeout,
            )
        finally:
            self.open_sessions -= 1


async def serve_websocket(
    factory: SessionFactory,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    path: str = "/mcp",
    allowed_origins: Collection[str] | None = None,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
    send_timeout: float | None = DEFAULT_SEND_TIMEOUT,
    close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
    ssl_context: ssl.SSLContext | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve MCP over WebSocket on ``host:port`` until cancelled; reports the URL.

    ``factory`` makes each connection's session (a :class:`mcptrio.Server` does). The server
    binds ``127.0.0.1`` unless told otherwise, and reports the URL clients connect to, such as
    ``ws://127.0.0.1:41234/mcp`` (``wss://`` with ``ssl_context``); when ``host`` resolves to
    several addresses, the URL names the first one bound.

    ``allowed_origins`` is described in :func:`origin_allowed`; ``max_frame_size`` bounds one
    incoming message (a bigger one closes that connection with 1009); ``max_connections``
    bounds the sessions open at once. The steps each connection goes through, and the time
    limits on them, are in the module docstring. Never returns.
    """
    if not path.startswith("/"):
        raise ValueError("path must start with '/'")
    if max_connections < 1:
        raise ValueError("max_connections must be at least 1")
    socket_listeners = await trio.open_tcp_listeners(port, host=host)
    address, bound_port = socket_listeners[0].socket.getsockname()[:2]
    listeners: list[trio.SocketListener] | list[trio.SSLListener[trio.SocketStream]]
    if ssl_context is None:
        listeners, scheme = socket_listeners, "ws"
    else:
        listeners = [
            trio.SSLListener(listener, ssl_context, https_compatible=True)
            for listener in socket_listeners
        ]
        scheme = "wss"
    endpoint = _Endpoint(
        factory,
        path=path,
        allowed_origins=allowed_origins,
        max_frame_size=max_frame_size,
        max_connections=max_connections,
        handshake_timeout=handshake_timeout,
        send_timeout=send_timeout,
        close_timeout=close_timeout,
        scheme="https" if ssl_context is not None else "http",
    )
    url_host = f"[{address}]" if ":" in address else address
    url = f"{scheme}://{url_host}:{bound_port}{path}"
    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, endpoint.serve_connection, listeners)
        log.info("serving MCP over WebSocket at %s", url)
        task_status.started(url)
